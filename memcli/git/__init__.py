"""Git: history, diffs of facts, commits, sync and hooks."""
