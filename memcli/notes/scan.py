"""Finding the Markdown files of a workspace and reading them safely."""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
import gc
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple, cast

from memcli.capped import read_capped
from memcli.errors import ConfigError
from memcli.notes.workspace import MEMORY_DIR, Workspace
from memcli.statedir import STATE_DIR

SKIP_DIRS = {STATE_DIR, ".git", ".hg", ".svn", "node_modules", "__pycache__"}
#: Never indexed, whatever ``index.include`` says: git's and memcli's own folders, and
#: ``.env`` files (secrets, not memory), wherever they are.
NEVER_DIRS = (".git", STATE_DIR)
NEVER_NAME_PREFIX = ".env"
#: The largest ``.memignore`` read (a real one is a few lines).
MAX_MEMIGNORE_BYTES = 1 << 20
#: Folders are listed through a file descriptor where the platform can (see iter_files()).
_LIST_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
BINARY_SNIFF = 8192
_first = itemgetter(0)


class FoundFile(NamedTuple):
    """A file found on disk: the same fields, in the same order, as the index's rows of
    known files (Store.iter_stats), so the two compare as tuples. Its absolute path is the
    workspace root joined with ``rel``."""

    rel: str
    mtime_ns: int
    size: int


class ScanResult(NamedTuple):
    """Every indexable file by path, the warnings (sorted) for what was skipped, and the
    folders listed (workspace-relative; empty when not every folder was)."""

    files: dict[str, FoundFile]
    warnings: list[str]
    folders: tuple[str, ...] = ()


def never_indexed(rel: str) -> bool:
    """Whether a workspace-relative path is one memcli never indexes or shows (see
    :data:`NEVER_DIRS`)."""
    if rel.rpartition("/")[2].startswith(NEVER_NAME_PREFIX):
        return True
    wrapped = f"/{rel}/"
    return any(f"/{folder}/" in wrapped for folder in NEVER_DIRS)


def link_allowed(rel: str, target_rel: str) -> bool:
    """Whether a link at ``rel`` may be followed to ``target_rel`` (both inside the
    workspace): never to a path never indexed, and from ``memory/`` only within it."""
    if never_indexed(target_rel):
        return False
    memory = f"{MEMORY_DIR}/"
    return not rel.startswith(memory) or f"{target_rel}/".startswith(memory)


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob with ``**`` (any folders), ``*``, ``?`` and ``[...]``."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


#: A glob that is a literal folder prefix, ``**/*`` and a literal suffix without '/'.
_SIMPLE_GLOB = re.compile(r"((?:[^*?\[\n]+/)?)\*\*/\*([^*?\[/\n]*)\Z")


def _static_prefix(pattern: str) -> str:
    parts = []
    for part in pattern.split("/")[:-1]:
        if any(ch in part for ch in "*?["):
            break
        parts.append(part)
    return "/".join(parts)


class Matcher:
    """Include globs minus ``.memignore`` (gitignore syntax, via pathspec when present)."""

    def __init__(self, ws: Workspace, include: list[str]) -> None:
        self.include = [glob_to_regex(p.lstrip("/")) for p in include]
        # "folder/**/*.ext" (the default include) needs no regex: a prefix and a suffix
        simple = [_SIMPLE_GLOB.match(p.lstrip("/")) for p in include]
        self._simple = [(m.group(1), m.group(2)) for m in simple if m] if all(simple) else None
        roots = {_static_prefix(p.lstrip("/")) for p in include}
        self.roots = sorted(r for r in roots if not r or not never_indexed(r))
        self._ignore = None
        ignore_file = ws.root / ".memignore"
        if ignore_file.exists():  # read (and refused) when not a regular file
            import pathspec  # only imported when a .memignore exists

            try:
                data = read_capped(ignore_file, MAX_MEMIGNORE_BYTES)
            except OSError as exc:
                raise ConfigError(f"{ignore_file}: cannot read: {exc}") from None
            lines = data.decode("utf-8", "replace").splitlines()
            self._ignore = pathspec.PathSpec.from_lines("gitwildmatch", lines)

    def matches(self, rel: str) -> bool:
        if never_indexed(rel):
            return False
        if self._simple is not None and "\n" not in rel:
            for head, tail in self._simple:
                if rel.startswith(head) and rel.endswith(tail):
                    break
            else:
                return False
        else:
            for rx in self.include:
                if rx.match(rel):
                    break
            else:
                return False
        return self._ignore is None or not self._ignore.match_file(rel)

    def names_in(self, head: str) -> Callable[[str], bool]:
        """A test of file names in the folder ``head`` (empty or ending in '/'), equal to
        ``matches(head + name)``; it is made once per folder, so most files cost one
        ``str.endswith``."""
        if self._simple is None or never_indexed(head):
            return lambda name: self.matches(head + name)
        # "head/**/*tail": a file in this folder matches when the folder lies under
        # head (a file name has no '/', so it cannot make up the rest) and it ends in tail.
        tails = tuple(tail for prefix, tail in self._simple if head.startswith(prefix))
        never = NEVER_NAME_PREFIX
        if self._ignore is None:
            return lambda name: name.endswith(tails) and not name.startswith(never)
        ignored = self._ignore.match_file
        return lambda name: (
            name.endswith(tails) and not name.startswith(never) and not ignored(head + name)
        )


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around a loop that allocates many objects that
    live on and form no cycles: otherwise its full collections re-traverse every object
    alive (all the imported modules') several times over: a quarter of a 10k-file scan."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def scan(ws: Workspace, include: list[str]) -> ScanResult:
    """Every indexable file with its (mtime_ns, size); warnings (sorted) for what is skipped;
    the folders listed."""
    warnings: list[str] = []
    folders: list[str] = []
    with gc_paused():
        files = {f.rel: f for f in iter_files(ws, include, warnings, folders)}
    warnings.sort()
    return ScanResult(files, warnings, tuple(folders))


def iter_files(
    ws: Workspace, include: list[str], warnings: list[str], folders: list[str] | None = None
) -> Iterator[FoundFile]:
    """Every indexable file in path order, one folder listed at a time; appends a warning
    for what is skipped, and each folder listed to ``folders`` when given.

    Path order is code-point order, which is SQLite's order of the same text (UTF-8 byte
    order), so a caller can compare the files with the index row by row while holding only
    the folders on the current path (see Indexer.unchanged).

    Symlinks are followed only while they stay inside the workspace; loops and links
    leaving it are skipped with a warning and never read. This runs before every search,
    so its loop is kept to one ``stat`` per file.
    """
    matcher = Matcher(ws, include)
    root = ws.root.resolve()
    seen_dirs: set[tuple[int, int]] = set()
    # a NamedTuple's own constructor is a Python function: twice the cost of the C one
    new_found = partial(tuple.__new__, FoundFile)

    def skip(rel: str, reason: object, *, folder: bool = False) -> None:
        if folder or matcher.matches(rel):
            warnings.append(f"{rel}: skipped: {reason}")

    # Paths are plain strings here: a Path per file would cost more than its stat.
    def listing(folder: str, rel_folder: str) -> list[FoundFile | tuple[str, str]]:
        """The files of one folder and its sub-folders to visit, in path order."""
        if folders is not None:
            folders.append(rel_folder)
        handle = None
        try:
            # Listed through a descriptor where possible: each file's stat is then looked up
            # from its folder (fstatat) rather than from / again: 7 % of a 10k-file scan here.
            if _LIST_BY_FD:
                handle = os.open(folder, _DIR_FLAGS)
            st = os.stat(folder) if handle is None else os.fstat(handle)
            key = (st.st_dev, st.st_ino)
            if key in seen_dirs:
                return []
            seen_dirs.add(key)
            with os.scandir(folder if handle is None else handle) as entries:
                # visited as listed, no list of entries kept; stat() needs the handle open
                return visit(entries, folder, rel_folder)
        except FileNotFoundError:  # gone since its parent was listed
            return []
        except OSError as exc:
            warnings.append(f"{rel_folder or '.'}: cannot list: {exc.strerror}")
            return []
        finally:
            if handle is not None:
                os.close(handle)

    def visit(
        entries: Iterator[os.DirEntry[str]], folder: str, rel_folder: str
    ) -> list[FoundFile | tuple[str, str]]:
        head = f"{rel_folder}/" if rel_folder else ""
        base = folder + os.sep
        wanted = matcher.names_in(head)
        out: list[FoundFile | tuple[str, str]] = []
        for entry in entries:
            name = entry.name
            if "\n" in name or "\r" in name:
                warnings.append(f"{head + name!r}: skipped: newline in file name")
                continue
            if not name.isascii() and not _utf8_name(name):
                warnings.append(f"{head + name!r}: skipped: file name is not valid UTF-8")
                continue
            try:
                if entry.is_symlink():
                    rel = head + name
                    target = Path(os.path.realpath(base + name))
                    if target != root and root not in target.parents:
                        skip(rel, "symlink leaves the workspace", folder=entry.is_dir())
                        continue
                    if not link_allowed(rel, target.relative_to(root).as_posix()):
                        skip(rel, "symlink leads out of memory/ or to a file never indexed")
                        continue
                    if not os.path.exists(base + name):
                        skip(rel, "broken link or link loop")
                        continue
                if entry.is_dir():
                    if name not in SKIP_DIRS:
                        # a folder sorts by its name and '/': after "a-b.md", before "a0.md"
                        out.append((f"{head}{name}/", base + name))
                    continue
                if not wanted(name) or not entry.is_file():
                    continue
                st = entry.stat()
            except (OSError, RuntimeError, ValueError) as exc:  # broken link, loop, permission
                skip(head + name, getattr(exc, "strerror", None) or exc)
                continue
            out.append(new_found((head + name, st.st_mtime_ns, st.st_size)))
        out.sort(key=_first)  # by path: sorting strings alone takes list.sort's fast path
        return out

    # Depth-first with a stack of listings: folders may nest deeper than Python's recursion
    # limit. A root inside another root is listed by the outer one.
    prefixes = matcher.roots
    roots = []
    for prefix in prefixes:
        if any(o == "" or prefix.startswith(o + "/") for o in prefixes if o != prefix):
            continue
        base = ws.root / prefix if prefix else ws.root
        if base.is_dir():
            if prefix and not _inside(root, base):
                raise ConfigError(
                    f"index.include: {prefix}/ leads outside the workspace"
                    f" (to {os.path.realpath(base)})",
                    hint="include patterns name folders inside the workspace; links leaving it"
                    " are not followed",
                )
            roots.append((f"{prefix}/", str(base)))
    stack: list[Iterator[FoundFile | tuple[str, str]]] = [iter(sorted(roots))]
    while stack:
        for item in stack[-1]:
            if type(item) is not FoundFile:  # a folder: list it, go on from its first entry
                rel_folder, folder = cast(tuple[str, str], item)
                stack.append(iter(listing(folder, rel_folder[:-1])))
                break
            yield item
        else:
            stack.pop()


def list_folder(
    ws: Workspace, matcher: Matcher, rel_folder: str
) -> tuple[dict[str, FoundFile], list[str]] | None:
    """The indexable files directly in one folder, as :func:`iter_files` finds them with
    ``matcher``, and its sub-folders (workspace-relative); None when it holds a link (whether
    the full listing follows it depends on the rest of the tree) or cannot be listed."""
    head = f"{rel_folder}/" if rel_folder else ""
    wanted = matcher.names_in(head)
    files: dict[str, FoundFile] = {}
    folders: list[str] = []
    try:
        with os.scandir(ws.root / rel_folder if rel_folder else ws.root) as entries:
            for entry in entries:
                name = entry.name
                if _unlisted(name):
                    continue  # never indexed (the full listing warns of them)
                if entry.is_symlink():
                    return None
                if entry.is_dir():
                    if name not in SKIP_DIRS:
                        folders.append(head + name)
                elif wanted(name) and entry.is_file():
                    st = entry.stat()
                    files[head + name] = FoundFile(head + name, st.st_mtime_ns, st.st_size)
    except OSError:
        return None
    return files, folders


def stat_files(ws: Workspace, include: list[str], rels: list[str]) -> ScanResult | None:
    """The files at ``rels`` as :func:`iter_files` would find them (one ``lstat`` each; a
    path that is gone or not indexable is left out), or None when one of them needs the
    full listing to say: a folder, a link on the way, a name it would warn about."""
    matcher = Matcher(ws, include)
    root = str(ws.root) + os.sep
    real = os.path.realpath(ws.root) + os.sep
    files: dict[str, FoundFile] = {}
    for rel in rels:
        if not rel or _unlisted(rel):
            return None
        if any(part in SKIP_DIRS for part in rel.split("/")[:-1]):
            continue
        try:
            st = os.lstat(root + rel)
        except FileNotFoundError:
            continue
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or os.path.realpath(root + rel) != real + rel:
            return None
        if matcher.matches(rel):
            files[rel] = FoundFile(rel, st.st_mtime_ns, st.st_size)
    return ScanResult(files, [])


def _inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (links resolved) is ``root`` or below it."""
    target = Path(os.path.realpath(path))
    return target == root or root in target.parents


def _unlisted(name: str) -> bool:
    """A name :func:`iter_files` skips with a warning: a line break, or bytes not UTF-8."""
    return "\n" in name or "\r" in name or not (name.isascii() or _utf8_name(name))


def _utf8_name(name: str) -> bool:
    """False for names with bytes that are not UTF-8 (decoded by Python as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_text(path: str | Path, limit: int | None = None) -> tuple[bytes, str | None, str | None]:
    """Read a file: (bytes, text or None when binary, warning or None).

    With ``limit`` (``index.max_file_mb`` in bytes), a larger file is read up to its last
    whole line within the limit, and the warning says so: a file is never dropped whole for
    its size."""
    with open(path, "rb") as fh:
        if limit is None:
            data = fh.read()
        else:  # read(n) allocates n bytes first: ask for no more than the file holds
            data = fh.read(min(os.fstat(fh.fileno()).st_size, limit) + 1)
        cut = None
        if limit is not None and len(data) > limit:
            end = data.rfind(b"\n", 0, limit)
            data = data[: end + 1] if end >= 0 else data[:limit]
            cut = _cut_warning(os.fstat(fh.fileno()).st_size, limit, data)
    if b"\x00" in data[:BINARY_SNIFF]:
        return data, None, "skipped: binary file"
    try:
        text, warning = data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warning = f"invalid UTF-8 at byte {exc.start}; decoded with replacement characters"
    if cut:
        warning = f"{warning}; {cut}" if warning else cut
    return data, text, warning


def _cut_warning(size: int, limit: int, data: bytes) -> str:
    lines = data.count(b"\n")
    return (
        f"{_size(size)} is over index.max_file_mb ({_size(limit)}): indexed its first {lines}"
        " lines; the rest is not searchable"
    )


def _size(n: int) -> str:
    return f"{n / 1048576:.1f} MiB" if n >= 1048576 else f"{n / 1024:.0f} KiB"
