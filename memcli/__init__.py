"""memcli: persistent, searchable memory for AI agents and people.

Markdown in a git-tracked folder is the source of truth; a SQLite index
(FTS5 BM25, optional sqlite-vec vectors) beside it is a rebuildable cache.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: `import memcli` loads nothing
if TYPE_CHECKING:
    from memcli.version import __version__ as __version__

__all__ = ["Memory", "__version__"]


def __getattr__(name: str) -> object:
    if name == "Memory":
        from memcli.memory import Memory  # the whole library: `import memcli` stays cheap

        return Memory
    if name == "__version__":  # memcli.version, which every module below imports instead
        from memcli.version import __version__

        return __version__
    raise AttributeError(name)
