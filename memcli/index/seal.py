"""Which index files this user's memcli built: a key kept outside every workspace, and the seal
each index carries.

A workspace that arrives without git (a tarball, a zip, a copied folder) can bring a
``.memcli/index.db`` someone else built, holding text no Markdown file holds, or a trigger.
memcli keeps a random key (32 bytes, mode 0600) in the user's cache folder
(:func:`memcli.config.layers.cache_dir`, ``index.key``) and seals each index it creates: the
``seal`` row of its ``meta`` table is a keyed BLAKE2b of the file's random id (``index_id``).
Whoever can only write the workspace cannot read the key, so cannot seal a file of their own.
An index whose seal does not check out, or whose schema holds an object memcli's does not (a
trigger, a view, a table of another name), is never read: it is rebuilt from the Markdown with
a warning (:mod:`memcli.index.indexfile`), or, when it cannot be, not answered from.

The seal names the file, not its content: a copy the user made to another folder keeps it,
and so does an index changed in place by someone who can write the folder (who could as well
write the Markdown). Checking it costs one read of a 32-byte file (once a process) and
three BLAKE2 hashes of a few dozen bytes: 64 us.
Losing the key (a cleared cache) costs one rebuild of each index, with a warning.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memcli.index.schema import INDEX_ID

try:  # the BLAKE2 module alone: hashlib loads OpenSSL first, 4% of a keyword search's work
    from _blake2 import blake2b
except ImportError:  # a Python built without it
    from hashlib import blake2b

__all__ = ["KEY_FILE", "SEAL", "UntrustedIndex", "key_path", "seal_of", "untrusted", "write_seal"]

KEY_FILE = "index.key"
#: The ``meta`` key of the seal.
SEAL = "seal"
_KEY_BYTES = 32
#: The key read, by its path (read once a process: the engine opens many connections).
_keys: dict[str, bytes] = {}

#: What memcli's schema puts in ``sqlite_master`` (:mod:`memcli.index.schema`, the vectors'
#: ``chunks_vec``), by type: names, and the prefixes of its virtual tables' own tables.
#: SQLite's own objects (``sqlite_autoindex_*``, ``sqlite_stat1``...) start with ``sqlite_``.
_TABLES = frozenset(
    {
        "meta",
        "files",
        "chunks",
        "facts",
        "skipped",
        "chunks_fts",
        "chunks_vec",
        "links",
        "link_paths",
    }
)
_TABLE_PREFIXES = ("chunks_fts_", "chunks_vec_", "sqlite_stat", "sqlite_sequence")
_INDEXES = frozenset(
    {"chunks_file", "facts_hash", "facts_file", "files_mtime", "links_file", "links_name"}
    | {"link_paths_path"}
)
_INDEX_PREFIXES = ("sqlite_autoindex_",)


class UntrustedIndex(Exception):
    """The file is a memcli index, but not one this user's memcli built (or it holds an object
    memcli's schema has none of): it is not read."""


def key_path() -> Path:
    """Where the user's key lives: ``index.key`` in memcli's cache folder."""
    from memcli.config.layers import cache_dir

    return cache_dir() / KEY_FILE


def user_key(*, create: bool) -> bytes:
    """The user's key; with ``create``, made first when there is none. Raises OSError naming
    why there is none (missing, unreadable, writable by others, not 32 bytes)."""
    path = str(key_path())
    found = _keys.get(path)
    if found is not None:
        return found
    try:
        key = _read_key(path)
    except FileNotFoundError:
        if not create:
            raise
        key = _make_key(path)
    _keys[path] = key
    return key


def _read_key(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022:
            raise OSError(errno.EPERM, "not a file only its owner can write", path)
        key = os.read(fd, _KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(key) != _KEY_BYTES:
        raise OSError(errno.EINVAL, f"not a key of {_KEY_BYTES} bytes", path)
    return key


def _make_key(path: str) -> bytes:
    """A new random key, written whole under a temporary name, then linked to ``path`` (never
    over it: when another process made one meanwhile, that one is the key). Where a folder
    takes no hard link, the file is made with ``O_EXCL`` and written in one call."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    key = os.urandom(_KEY_BYTES)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    tmp = os.path.join(folder, f".{KEY_FILE}.{os.getpid()}.{key[:4].hex()}.tmp")
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # a folder that takes no hard link
            _write_new(path, key)
    finally:
        os.unlink(tmp)
    return _read_key(path)


def _write_new(path: str, key: bytes) -> None:
    """Make ``path`` with ``key`` in it, unless it exists (made meanwhile by another process)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return
    try:
        os.write(fd, key)
    finally:
        os.close(fd)


def seal_of(index_id: str, key: bytes) -> str:
    """The seal of the index file with random id ``index_id`` under ``key``."""
    text = f"memcli index seal\x00{index_id}".encode()
    return blake2b(text, key=key, digest_size=32).hexdigest()


def _same(a: str, b: str, key: bytes) -> bool:
    """Whether two seals are equal, in a time that tells nothing of where they differ: their
    keyed hashes are compared, not they (``hmac.compare_digest`` would load OpenSSL)."""
    return bool(
        blake2b(a.encode(), key=key).digest()
        == blake2b(b.encode("utf-8", "replace"), key=key).digest()
    )


def write_seal(conn: Any) -> None:
    """Seal the index ``conn`` holds (inside the caller's transaction, after the migration that
    gave it its id). Without a key (none can be made), it stays unsealed: the next open
    rebuilds it and says why."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (INDEX_ID,)).fetchone()
    try:
        key = user_key(create=True)
    except OSError:
        return
    if row:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (SEAL, seal_of(str(row[0]), key)))


def untrusted(
    objects: Iterable[tuple[str, str]], meta: Mapping[str, str], *, create: bool = True
) -> str | None:
    """Why an index must not be read (None: it may): no seal this user's key checks
    (``meta``: its index id and seal), or an object in ``sqlite_master`` (``objects``: type,
    name) memcli's schema does not make. With ``create``, a missing key is made (the index
    rebuilt next is sealed with it); a key that cannot be made or read is said so."""
    index_id, sealed = meta.get(INDEX_ID), meta.get(SEAL)
    try:
        key = user_key(create=False)
    except FileNotFoundError:
        if not create:
            return f"was not built by memcli for this user (there is no key at {key_path()})"
        try:
            user_key(create=True)
        except OSError as exc:
            return (
                f"cannot be checked: no key can be made at {key_path()} ({exc.strerror});"
                " until one can, each command rebuilds the index"
            )
        return f"was not built by memcli for this user (there was no key yet: made {key_path()})"
    except OSError as exc:
        return (
            f"cannot be checked: the key {key_path()} cannot be read ({exc.strerror});"
            " until it can (or is removed), each command rebuilds the index"
        )
    if not index_id or not sealed:
        return (
            "was not built by memcli for this user"
            " (it carries no seal: built elsewhere, or by an older memcli)"
        )
    if not _same(seal_of(str(index_id), key), str(sealed), key):
        return "was not built by memcli for this user (its seal does not check out)"
    for kind, name in objects:
        if not _ours(str(kind), str(name)):
            return (
                f"holds a {str(kind)[:20]!r} named {str(name)[:60]!r}"
                " that memcli's schema does not make"
            )
    return None


def _ours(kind: str, name: str) -> bool:
    if kind == "table":
        return name in _TABLES or name.startswith(_TABLE_PREFIXES)
    if kind == "index":
        return name in _INDEXES or name.startswith(_INDEX_PREFIXES)
    return False
