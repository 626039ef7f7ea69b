"""Command-line layer: argument parsing and rendering only."""
