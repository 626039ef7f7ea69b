"""The index: SQLite store, chunking, vectors, the embedding cache, sync and watch."""
