"""The library facade: one object per workspace that the CLI (or any caller) drives."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memcli.config import Settings, load_settings
from memcli.errors import BadInput, LockTimeout, MemcliError
from memcli.index import db
from memcli.index.chunking import split_lines
from memcli.index.indexer import (
    Indexer,
    IndexReport,
    is_corruption,
    open_store,
    rel_paths,
    replace_index,
    writer_lock,
)
from memcli.index.store import Store
from memcli.locks import ProcessLock
from memcli.notes.workspace import MEMORY_DIR, Workspace, date_from_name, find_workspace
from memcli.search.pipeline import SearchOptions, SearchResult, run_search

INDEX_LOCK_TIMEOUT = 60.0
#: A search embeds chunks still without vectors only when at most this many wait.
SEARCH_EMBED_LIMIT = 256


@dataclass
class AddResult:
    path: str
    line: int
    entry: str
    added: bool
    duplicate_of: str | None = None
    redactions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "entry": self.entry.rstrip("\n"),
            "added": self.added,
            "duplicate_of": self.duplicate_of,
            "redactions": self.redactions,
        }


@dataclass
class GetResult:
    path: str
    start_line: int
    end_line: int
    lines: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "text": "\n".join(self.lines),
        }


class Memory:
    """A workspace with its settings and (lazily) its index."""

    def __init__(self, ws: Workspace, settings: Settings) -> None:
        self.ws = ws
        self.settings = settings
        self.warnings: list[str] = []
        self._store: Store | None = None
        self._writing = False  # this object holds the writer lock (Memory.index)
        # memcli.providers.embeddings.Embedder, False when no model is set
        self._embedder: Any = None

    @classmethod
    def open(
        cls, workspace: str | Path | None = None, overrides: dict[str, Any] | None = None
    ) -> Memory:
        ws = find_workspace(workspace)
        return cls(ws, load_settings(ws.root, overrides))

    @property
    def store(self) -> Store:
        if self._store is None:
            seen = len(self.warnings)
            self._store = open_store(self.ws, self.warnings)
            if len(self.warnings) > seen and not self._writing:
                self._refill()  # it was damaged and rebuilt empty: fill it before use
        return self._store

    @property
    def embedder(self) -> Any:
        """The configured Embedder (memcli.providers.embeddings), or None: keyword search only."""
        if self._embedder is None:
            self._embedder = False
            if self.settings.get("embedding.model"):
                from memcli.providers.embeddings import Embedder

                self._embedder = Embedder.from_settings(self.settings) or False
        return self._embedder or None

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._embedder:
            self._embedder.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexing --------------------------------------------------------
    def indexer(self, writer: ProcessLock | None = None) -> Indexer:
        return Indexer(self.ws, self.store, self.settings, self.embedder or False, writer)

    def index(
        self,
        paths: list[str] | None = None,
        *,
        force: bool = False,
        progress: Any = None,
        lock_timeout: float | None = None,
        embed: bool = True,
        embed_limit: int | None = None,
    ) -> IndexReport:
        """Incremental sync under the writer lock (then vectors, unless ``embed`` is False;
        with ``embed_limit``, only when that few chunks wait for one)."""
        rels = rel_paths(self.ws, paths) if paths else None
        with writer_lock(self.ws).acquire(self._lock_timeout(lock_timeout)) as lock:
            self._writing = True
            try:
                report = self._with_repair(
                    lambda: self.indexer(lock).sync(
                        rels, force=force, progress=progress, embed=embed, embed_limit=embed_limit
                    )
                )
            finally:
                self._writing = False
        report.warnings[:0] = self.warnings
        self.warnings = []
        return report

    def sync_before_search(self) -> tuple[bool | None, list[str]]:
        """Re-index changed files; returns (stale, warnings).

        With ``index.sync_on_search`` off the index is trusted as it is (a watcher or the
        git hooks keep it current) and nothing is checked: stale is None, unknown.
        """
        if not self.settings.get("index.sync_on_search"):
            return None, []
        indexer = self.indexer()
        if (
            not indexer.dirty()
            and not indexer.settled
            and not indexer.needs_rebuild()
            and not self._vectors_waiting()
        ):
            return False, []
        lock = writer_lock(self.ws)
        if not lock.try_acquire():
            try:
                lock.acquire(timeout=2.0)
            except LockTimeout:
                return True, ["index is being written by another process; results may be stale"]
        try:
            report = indexer.sync(embed_limit=SEARCH_EMBED_LIMIT)
        finally:
            lock.release()
        return False, [w for w in report.warnings]

    def _vectors_waiting(self) -> bool:
        """A few chunks lack vectors and a search may embed them first (providers.embeddings)."""
        if self.embedder is None:
            return False
        from memcli.providers.embeddings import needs_backfill

        return needs_backfill(self.store, self.embedder, SEARCH_EMBED_LIMIT)

    # -- damaged index ---------------------------------------------------
    def _lock_timeout(self, explicit: float | None = None) -> float:
        return float(explicit if explicit is not None else self.settings.get("index.lock_timeout"))

    def _with_repair(self, fn: Any, *, retry: Any = None) -> Any:
        """Run ``fn``; if the index file turns out damaged (found by a query, not on open),
        replace it, refill it from the Markdown and run ``retry`` (or ``fn``) once more."""
        try:
            return fn()
        except db.database_errors() as exc:
            if not is_corruption(exc):
                raise
            identity = self._store.identity if self._store is not None else None
            if self._store is not None:
                self._store.close()
                self._store = None
            reason = f"index {self.ws.index_path} is damaged ({exc})"
            if self._writing:  # the caller's retry is the sync that refills it
                self._store = replace_index(self.ws, identity, reason, self.warnings)
            else:
                with writer_lock(self.ws).acquire(self._lock_timeout()):
                    self._store = replace_index(self.ws, identity, reason, self.warnings)
                    self._refill(locked=True)
        return (retry or fn)()

    def _refill(self, *, locked: bool = False) -> None:
        """Index every file into a rebuilt (empty) index, under the writer lock."""
        if not locked:
            with writer_lock(self.ws).acquire(self._lock_timeout()):
                return self._refill(locked=True)
        assert self._store is not None
        report = Indexer(self.ws, self._store, self.settings, False).sync(embed=False)
        self.warnings.extend(report.warnings)
        return None

    # -- search ----------------------------------------------------------
    def search(self, query: str, opts: SearchOptions, *, sync: bool = True) -> SearchResult:
        return self._with_repair(
            lambda: self._search(query, opts, sync=sync),
            retry=lambda: self._search(query, opts, sync=True),
        )

    def _search(self, query: str, opts: SearchOptions, *, sync: bool = True) -> SearchResult:
        stale, warnings = self.sync_before_search() if sync else (False, [])
        mode, vector = "keyword", None
        if self.embedder is not None or opts.strategy not in ("auto", "keyword"):
            from memcli.providers.embeddings import plan_search

            plan = plan_search(self.store, self.embedder, opts.strategy, query)
            mode, vector = plan.mode, plan.vector
            warnings = [*warnings, *plan.warnings]
        result = run_search(self.store, query, opts, mode=mode, query_vector=vector)
        result.stale = stale
        result.warnings[:0] = [*self.warnings, *warnings]
        self.warnings = []
        return result

    def search_options(self, **flags: Any) -> SearchOptions:
        """SearchOptions from settings, with non-None ``flags`` on top."""
        s = self.settings
        opts = SearchOptions(
            limit=s.get("search.limit"),
            min_score=s.get("search.min_score"),
            strategy=s.get("search.strategy"),
            candidates=s.get("search.candidates"),
            decay=s.get("decay.enabled"),
            half_life_days=s.get("decay.half_life_days"),
            snippet_lines=s.get("search.snippet_lines"),
            fusion=s.get("search.fusion"),
            rrf_k=s.get("search.rrf_k"),
            keyword_weight=s.get("search.keyword_weight"),
            vector_weight=s.get("search.vector_weight"),
        )
        for key, value in flags.items():
            if value is not None:
                setattr(opts, key, value)
        if opts.limit < 1:
            raise BadInput("-n/--limit must be at least 1")
        return opts

    # -- writing ---------------------------------------------------------
    def add(
        self,
        text: str,
        *,
        to: str | None = None,
        evergreen: bool = False,
        namespace: str | None = None,
        type: str | None = None,
        tags: list[str] | tuple[str, ...] = (),
        redact: bool = True,
        now: datetime | None = None,
        index: bool = True,
    ) -> AddResult:
        """Append one fact (redacted, de-duplicated) and index the file."""
        now = now or datetime.now()
        target = self.target_path(to=to, evergreen=evergreen, namespace=namespace, day=now)
        redactions: list[str] = []
        if redact:
            from memcli.notes.redact import redact as redact_text

            red = redact_text(text)
            text, redactions = red.text, list(red.kinds)
        from memcli.notes import entries

        block = entries.format_entry(text, type, tuple(tags), now.strftime("%H:%M"))
        if redact:  # again on the whole entry: a --tag or --type may hold a secret too
            red = redact_text(block)
            block, redactions = red.text, [*redactions, *red.kinds]
        key = entries.fact_key(entries.parse_entries(block)[0].text)
        rel = self.ws.rel(target)
        with entries.locked_append(target) as fd:
            existing = target.read_text(encoding="utf-8", errors="replace")
            for e in entries.parse_entries(existing):
                if entries.fact_key(e.text) == key:
                    return AddResult(rel, e.line, block, False, f"{rel}:{e.line}", redactions)
            dup = self._indexed_duplicate(key, rel)
            if dup:
                return AddResult(rel, 0, block, False, dup, redactions)
            header = f"# {now.date().isoformat()}\n\n" if not existing and _is_daily(target) else ""
            line = len(split_lines(existing)) + header.count("\n") + 1
            entries.append_text(fd, target, header + block)
        result = AddResult(rel, line, block, True, None, redactions)
        if index:
            try:
                # a quick write: embed the new fact, not a back-fill of thousands of chunks
                report = self.index([str(target)], embed_limit=SEARCH_EMBED_LIMIT)
            except MemcliError as exc:  # the fact is saved; the index catches up on its next sync
                result.warnings.append(f"{rel} not indexed yet: {exc.message}")
            else:
                result.warnings.extend(report.warnings)
        return result

    def _indexed_duplicate(self, key: str, rel: str) -> str | None:
        try:
            found = self.store.find_fact(key)
        except Exception:  # a broken index must never block writing a memory
            return None
        if found and found[0] != rel:
            return f"{found[0]}:{found[1]}"
        return None

    def target_path(
        self,
        *,
        to: str | None = None,
        evergreen: bool = False,
        namespace: str | None = None,
        day: datetime | None = None,
    ) -> Path:
        """Where an entry goes: ``--to``, MEMORY.md, or the (namespaced) daily file."""
        if sum(bool(x) for x in (to, evergreen)) > 1:
            raise BadInput("--to and --evergreen cannot be combined")
        if to:
            base = self.ws.memory_dir if not Path(to).is_absolute() else None
            target = self.ws.resolve_user_path(_to_path(to), base=base)
            if target.suffix != ".md":
                raise BadInput(f"--to {to!r}: memory files end in .md")
            memory_root = self.ws.memory_dir.resolve()
            if memory_root not in target.parents:
                raise BadInput(f"--to {to!r} is not under {MEMORY_DIR}/")
            if target.exists() and not target.is_file():
                raise BadInput(f"--to {to!r} is not a file")
            return target
        if evergreen:
            return self.ws.resolve_user_path(self.ws.evergreen_path)
        return self.ws.daily_path((day or datetime.now()).date(), namespace)

    # -- reading ---------------------------------------------------------
    def get(self, spec: str) -> GetResult:
        """``PATH[:LINE[:COUNT]]`` -> those lines of a memory file."""
        path_text, start, count = parse_get_spec(spec)
        target = self.ws.resolve_user_path(path_text)
        cwd = Path.cwd().resolve()
        if not target.is_file() and self.ws.root.resolve() in (cwd, *cwd.parents):
            target = self.ws.resolve_user_path(path_text, base=cwd)
        if not target.is_file():
            raise BadInput(f"no such file: {path_text}")
        lines = entries_lines(target)
        if start > max(len(lines), 1):
            raise BadInput(f"{path_text} has {len(lines)} lines; line {start} is past the end")
        end = len(lines) if count is None else min(len(lines), start + count - 1)
        return GetResult(self.ws.rel(target), start, end, lines[start - 1 : end])

    def files(self) -> list[dict[str, Any]]:
        return self._with_repair(lambda: self.store.list_files())

    def status(self) -> dict[str, Any]:
        return self._with_repair(self._status)

    def _status(self) -> dict[str, Any]:
        store = self.store
        indexer = self.indexer()
        found = indexer.scan()
        dirty = indexer.dirty(found)
        files, chunks = store.counts()
        last = store.get_meta("last_indexed")
        from memcli.providers.embeddings import status_info  # no provider call, no LiteLLM

        vec = status_info(store, self.settings)
        return {
            "workspace": str(self.ws.root),
            "index": str(self.ws.index_path),
            "files": files,
            "chunks": chunks,
            "mode": vec["mode"],
            "mode_reason": vec["mode_reason"],
            "embedding": vec["embedding"],
            "cache": vec["cache"],
            "dirty": dirty,
            "git": _git_state(self.ws.root),
            "last_indexed": (
                datetime.fromtimestamp(float(last)).isoformat(timespec="seconds") if last else None
            ),
            "warnings": [
                *self.warnings,
                *found.warnings,
                *(
                    f"{path}: skipped: {why}"
                    for path, (_, _, why) in sorted(store.skipped().items())
                ),
            ],
        }


def _git_state(root: Path) -> dict[str, Any] | None:
    """Branch, dirty memory files, ahead/behind; None outside git (one subprocess, no GitPython)."""
    from memcli.git.gitops import quick_status

    return quick_status(root, MEMORY_DIR)


def _to_path(to: str) -> str:
    """``--to notes.md`` means ``memory/notes.md``; ``memory/x.md`` is kept as given."""
    parts = Path(to).parts
    if parts and parts[0] == MEMORY_DIR:
        return str(Path(*parts[1:])) if len(parts) > 1 else to
    return to


def _is_daily(target: Path) -> bool:
    return date_from_name(target.name) is not None


def entries_lines(path: Path) -> list[str]:
    return split_lines(path.read_text(encoding="utf-8", errors="replace"))


def parse_get_spec(spec: str) -> tuple[str, int, int | None]:
    """Split ``PATH[:LINE[:COUNT]]`` (the path itself may contain ':')."""
    parts = spec.rsplit(":", 2)
    nums: list[int] = []
    while len(parts) > 1 and parts[-1].isdigit() and len(nums) < 2:
        nums.insert(0, int(parts.pop()))
    path = ":".join(parts)
    if not path:
        raise BadInput(f"invalid location {spec!r}", hint="use PATH[:LINE[:COUNT]]")
    start = nums[0] if nums else 1
    count = nums[1] if len(nums) > 1 else None
    if start < 1 or (count is not None and count < 1):
        raise BadInput(f"invalid location {spec!r}: lines start at 1")
    return path, start, count
