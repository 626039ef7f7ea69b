"""memcli: persistent, searchable memory for AI agents and people.

Markdown in a git-tracked folder is the source of truth; a SQLite index
(FTS5 BM25, optional sqlite-vec vectors) beside it is a rebuildable cache.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["Memory", "__version__"]


def __getattr__(name: str) -> object:
    if name == "Memory":
        from memcli.memory import Memory  # the whole library: `import memcli` stays cheap

        return Memory
    raise AttributeError(name)
