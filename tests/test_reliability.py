"""Reliability and security: every failure mode memcli is proven to survive.

Read this list to see what is covered: each failure mode, then the test that proves it.
The tests live in ``tests/test_reliability_*.py`` and ``tests/test_paths.py``;
``test_catalogue_is_complete`` below fails if a named test disappears.

Concurrency (test_reliability_concurrency.py)
  - 8 processes x 25 ``memcli add`` on one daily file: every fact once, each on
    its own line, nothing interleaved
      -> test_parallel_adds_keep_every_fact_once
  - add, add --ns, index, index --force, search and a watcher all at once, starting
    with no index: never ``database is locked``, never a failure, nothing lost
      -> test_add_index_search_together_never_locked
  - add while another process holds the writer lock for long: the fact is kept
    and the add succeeds (the index catches up later)
      -> test_add_succeeds_when_index_lock_is_busy

Crash safety (test_reliability_crash.py)
  - ``kill -9`` at random moments of ``index --force`` on 3,000 files: the index
    opens (integrity ok, no rebuild) and the next ``index`` makes it equal to a
    fresh rebuild (files, chunks, FTS rows, facts, search results)
      -> test_kill9_during_index_force_is_repaired
  - ``kill -9`` at random moments of ``add``: each entry whole or absent
      -> test_kill9_during_add_leaves_whole_entry_or_none
  - a killed writer never leaves a stale lock
      -> test_kill9_releases_writer_lock

Damaged index (test_reliability_corruption.py); memory/ is never modified
  - garbage bytes, text, truncated file, header only, foreign SQLite DB, foreign
    ``meta`` table: every command rebuilds it with a warning and succeeds
      -> test_corrupt_index_is_rebuilt
  - damaged pages that opening does not notice (FTS data, chunks, files...): the
    query that meets them (search, files, status, index --force, add) repairs it
      -> test_corruption_found_late_is_rebuilt
  - the same met by a running watcher's sync: repaired in that sync, not retried forever
      -> test_damage_met_by_a_sync_is_repaired (test_watch.py)
  - an index of schema 1 is migrated in place (doctor, read-only, says it is older)
      -> test_schema_1_index_is_migrated_in_place
  - garbage in index.db-wal / index.db-shm beside a good index: ignored, no rebuild
      -> test_garbage_wal_and_shm_are_ignored
  - an index from a newer memcli: exit 3 saying what to do, index kept
      -> test_newer_schema_is_a_clear_error
  - a newer index never blocks ``add`` (the fact is kept, with a warning)
      -> test_add_with_newer_index_keeps_the_fact
  - a foreign DB whose user_version looks newer is still foreign
      -> test_foreign_db_with_high_user_version

Bad files (test_reliability_files.py)
  - binary, invalid UTF-8, over the size cap, empty
      -> test_bad_files_are_skipped_or_decoded_with_warnings
  - a binary file is remembered with its stat: no re-index on every search, read again
    once it changes, listed by status
      -> test_binary_file_is_remembered_not_reread
  - folders nested deeper than Python's recursion limit
      -> test_deeply_nested_folders
  - symlink loops (folders and files)
      -> test_symlink_loops_do_not_hang
  - symlinks to files and folders outside: never indexed, never opened
      -> test_symlinks_leaving_workspace_are_never_read
  - names with spaces, unicode and newlines
      -> test_odd_file_names
  - a file that cannot be read is a warning, not a crash
      -> test_file_vanishing_or_unreadable

Paths (test_paths.py)
  - ``--to``, ``--ns``, ``get``, ``index PATH`` with ``..``, absolute paths and
    symlinked folders pointing out: exit 2, nothing created outside
      -> test_cli_paths_outside_are_refused
  - Hypothesis: random path strings never create anything outside
      -> test_random_paths_never_escape

Secrets (test_reliability_secrets.py)
  - every kind is redacted by ``memcli add`` before it reaches memory/ or the index
      -> test_add_redacts_every_kind
  - a multi-line private key given on stdin
      -> test_add_redacts_private_key_from_stdin
  - ``--no-redact`` keeps the text, for add only
      -> test_no_redact_opt_out_is_add_only

Hostile content (test_reliability_hostile.py)
  - prompt injection in a memory file is indexed and returned as data; nothing
    is written anywhere
      -> test_prompt_injection_is_data
  - SQL and FTS5 syntax in files and in queries is data
      -> test_sql_and_fts_syntax_is_data
  - control characters in memory (clear screen, OSC title/clipboard) never reach
    the terminal raw (shown as \\xNN)
      -> test_terminal_escapes_in_memory_are_not_emitted
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

MEMCLI = [sys.executable, "-m", "memcli"]
PROC_TIMEOUT = 120


def memcli(
    root: Path, *args: str, input: str | None = None, check: bool = False, **kw: Any
) -> subprocess.CompletedProcess[str]:
    """Run the real ``python -m memcli -w ROOT ...`` in a subprocess."""
    proc = subprocess.run(
        [*MEMCLI, "-w", str(root), *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=PROC_TIMEOUT,
        **kw,
    )
    if check:
        assert proc.returncode == 0, (args, proc.returncode, proc.stderr)
    return proc


def tree_digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (links recorded by target, not followed)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in sorted(
            filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        ):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, folder)
            if os.path.islink(full):
                out[rel] = "link:" + os.readlink(full)
            else:
                with open(full, "rb") as fh:
                    out[rel] = hashlib.sha256(fh.read()).hexdigest()
    return out


def everything_under(folder: Path) -> list[str]:
    """Every path below ``folder`` (links not followed), sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            found.append(os.path.relpath(os.path.join(dirpath, name), folder))
    return sorted(found)


def index_bytes(root: Path) -> bytes:
    """The raw bytes of the index and its WAL (to look for text that must not be there)."""
    data = b""
    for suffix in ("", "-wal"):
        p = root / ".memcli" / f"index.db{suffix}"
        if p.exists():
            data += p.read_bytes()
    return data


_NAMED = re.compile(r"-> (test_\w+)")
_FILES = [
    "test_reliability_concurrency",
    "test_reliability_crash",
    "test_reliability_corruption",
    "test_reliability_files",
    "test_paths",
    "test_reliability_secrets",
    "test_reliability_hostile",
    "test_watch",
]


def test_catalogue_is_complete() -> None:
    """Every test named in the catalogue above exists in one of the reliability files."""
    named = set(_NAMED.findall(__doc__ or ""))
    assert len(named) >= 20
    defined: set[str] = set()
    for mod in _FILES:
        module = importlib.import_module(f"tests.{mod}")
        defined |= {name for name in vars(module) if name.startswith("test_")}
    assert sorted(named - defined) == []
