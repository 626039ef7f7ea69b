"""Operations on the notes themselves: add a fact, read lines back, list indexed files."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import memcli.index.factrows as factrows
import memcli.service.git as gitops
import memcli.service.indexing as indexing
from memcli.errors import BadInput, GitError, MemcliError, PathOutsideWorkspace
from memcli.notes.lines import split_lines
from memcli.notes.scan import Matcher, read_text
from memcli.notes.workspace import MEMORY_DIR, date_from_name
from memcli.service.core import SEARCH_EMBED_LIMIT, MemoryCore

if TYPE_CHECKING:
    from collections.abc import Callable

    from memcli.service.datatypes import AddResult, GetResult


def add(
    core: MemoryCore,
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
    commit: bool = False,
    expires: str | None = None,
    status: tuple[str, ...] = (),
) -> AddResult:
    """Append one fact (redacted, de-duplicated) and index the file; with ``commit``,
    commit that file alone with a message naming the fact (refused before anything is
    written when the workspace is not in a git repository). ``expires`` (``30d`` or a
    date) and ``status`` (status lines, :mod:`memcli.notes.lifecycle`) go under it."""
    checked: list[str] = []
    if commit:
        gitops.require_repo(core)
        from memcli.git.commit import check_committable  # git code on --commit only

        checked = check_committable(core.ws.root)  # mid-merge: refused before writing
    if expires is not None:
        from memcli.notes.lifecycle import expiry_date, status_line

        day = (now or datetime.now()).date()
        status = (*status, status_line("expires", day=expiry_date(expires, day)))
    result = _add(
        core,
        text,
        to=to,
        evergreen=evergreen,
        namespace=namespace,
        type=type,
        tags=tags,
        redact=redact,
        now=now,
        index=index,
        status=status,
    )
    if commit:
        result.committed = True
        try:
            result.commit = _commit_added(core, result)
        except GitError as exc:
            where = (
                f"saved in {result.path}:{result.line}"
                if result.added
                else f"already in {result.duplicate_of}"
            )
            raise GitError(
                f"the fact is {where} but not committed ({exc.message}); nothing is staged",
                hint=exc.hint
                or "fix what git reports, then run the same add with {commit}: it commits the fact",
                fields=("commit",),
            ) from None
        if result.commit:
            result.warnings.extend(checked)
    return result


def _commit_added(core: MemoryCore, result: AddResult) -> str | None:
    """Commit the file holding the fact :func:`add` wrote or found, naming the fact as
    written (redacted). A fact found already there is committed when HEAD lacks it (an
    earlier commit failed): the same add is the way to retry."""
    from memcli.git.commit import facts_message, head_text  # git code on git operations
    from memcli.notes.entries import fact_key, parse_entries  # loaded by add already

    fact = parse_entries(result.entry)[0].text
    rel = result.path
    if not result.added:
        rel = (result.duplicate_of or rel).rsplit(":", 1)[0]
        committed = head_text(core.ws.root, core.ws.root / rel) or ""
        key = fact_key(fact)
        if any(fact_key(e.text) == key for e in parse_entries(committed)):
            return None  # committed before: nothing to do
    return gitops.commit(core, [core.ws.root / rel], facts_message([fact]))


def _add(
    core: MemoryCore,
    text: str,
    *,
    to: str | None,
    evergreen: bool,
    namespace: str | None,
    type: str | None,
    tags: list[str] | tuple[str, ...],
    redact: bool,
    now: datetime | None,
    index: bool,
    status: tuple[str, ...] = (),
) -> AddResult:
    now = now or datetime.now()
    target = target_path(core, to=to, evergreen=evergreen, namespace=namespace, day=now)
    redactions: list[str] = []
    if redact:
        from memcli.notes.redact import redact as redact_text  # add's own: not on search

        red = redact_text(text)
        text, redactions = red.text, list(red.kinds)
    from memcli.notes import entries  # not on the search path, only add's
    from memcli.service.datatypes import AddResult  # (with the add)

    block = entries.format_entry(text, type, tuple(tags), now.strftime("%H:%M"))
    block += "".join(status)
    _check_size(block, int(core.settings.get("add.max_kb")))
    if redact:  # again on the whole entry: a --tag or --type may hold a secret too
        from memcli.notes.redact import redact as redact_text  # (loaded above)

        red = redact_text(block)
        block, redactions = red.text, [*redactions, *red.kinds]
    key = entries.fact_key(entries.parse_entries(block)[0].text)
    rel = core.ws.rel(target)
    with entries.appending(target, core.ws.writers_lock, within=core.ws.memory_bounds) as file:
        for e in entries.parse_entries(file.text):
            if entries.fact_key(e.text) == key:
                return AddResult(rel, e.line, block, False, f"{rel}:{e.line}", redactions)
        dup = _indexed_duplicate(core, key, rel)
        if dup:
            return AddResult(rel, 0, block, False, dup, redactions)
        if not file.text:
            header = entries.day_title(now.date()) if _is_daily(target) else ""
        else:  # never under a flush's provenance heading: it names a conversation
            header = entries.add_heading(file.text, now.strftime("%H:%M"))
        line = file.next_line + header.count("\n")
        file.write(header + block)
    result = AddResult(rel, line, block, True, None, redactions)
    if index:
        try:
            # a quick write: embed the new fact, not a back-fill of thousands of chunks
            report = indexing.index(core, [str(target)], embed_limit=SEARCH_EMBED_LIMIT)
        except MemcliError as exc:  # the fact is saved; the index catches up on its next sync
            result.warnings.append(f"{rel} not indexed yet: {exc.message}")
        else:
            result.warnings.extend(report.warnings)
    return result


def _indexed_duplicate(core: MemoryCore, key: str, rel: str) -> str | None:
    try:
        found = factrows.find_fact(core.store.conn, key)
    except Exception:  # a broken index must never block writing a memory
        return None
    if found and found[0] != rel:
        return f"{found[0]}:{found[1]}"
    return None


def target_path(
    core: MemoryCore,
    *,
    to: str | None = None,
    evergreen: bool = False,
    namespace: str | None = None,
    day: datetime | None = None,
) -> Path:
    """Where an entry goes: ``--to``, MEMORY.md, or the (namespaced) daily file."""
    if sum(bool(x) for x in (to, evergreen)) > 1:
        raise BadInput("{to} and {evergreen} cannot be combined", fields=("to", "evergreen"))
    if to:
        base = core.ws.memory_dir if not Path(to).is_absolute() else None
        target = _named("to", lambda: core.ws.resolve_user_path(_to_path(to), base=base))
        if target.suffix != ".md":
            raise BadInput(f"{{to}} {to!r}: memory files end in .md", fields=("to",))
        memory_root = core.ws.memory_dir.resolve()
        if memory_root not in target.parents:
            raise BadInput(f"{{to}} {to!r} is not under {MEMORY_DIR}/", fields=("to",))
        if target.exists() and not target.is_file():
            raise BadInput(f"{{to}} {to!r} is not a file", fields=("to",))
        return target
    if evergreen:  # a link there is checked by the write (memcli.safewrite)
        return core.ws.evergreen_path
    return core.ws.daily_path((day or datetime.now()).date(), namespace)


def get(core: MemoryCore, spec: str, cwd: Path | None = None) -> GetResult:
    """A citation -> those lines of a memory file (a file the index covers, as text),
    secrets redacted as a search shows them: ``PATH`` (the whole file), ``PATH:LINE``
    (that line), ``PATH:START-END`` or ``PATH:LINE:COUNT``. A path is taken from the
    workspace, else from ``cwd`` (the caller's folder; default: this process's) when
    inside it."""
    path_text, start, count = parse_get_spec(spec)
    cwd = (cwd or Path.cwd()).resolve()
    target = _get_target(core, path_text, cwd)
    if not target.is_file():
        bad = _bad_location(path_text, lambda p: _get_target(core, p, cwd).is_file())
        if bad is not None:
            raise BadInput(f"invalid location {bad!r} in {spec!r}", hint=LOCATION_HINT)
        raise BadInput(f"no such file: {path_text}")
    include = core.settings.get("index.include")
    if not Matcher(core.ws, include).matches(core.ws.rel(target)):
        raise BadInput(
            f"{path_text} is not a memory file",
            hint=f"get reads the files the index covers (index.include: {', '.join(include)})",
        )
    _, text, _ = read_text(target)
    if text is None:
        raise BadInput(f"{path_text} is a binary file")
    from memcli.notes.redact import redact_lines  # get's own: not on --help

    # the whole file, so a key block that starts above the lines asked for is found too
    lines = split_lines(redact_lines(text).text)
    if start > max(len(lines), 1):
        raise BadInput(f"{path_text} has {len(lines)} lines; line {start} is past the end")
    end = len(lines) if count is None else min(len(lines), start + count - 1)
    from memcli.service.datatypes import GetResult  # get's own result: not on search

    return GetResult(core.ws.rel(target), start, end, lines[start - 1 : end])


def _get_target(core: MemoryCore, path_text: str, cwd: Path) -> Path:
    """The file ``get`` reads: from the workspace, else from ``cwd`` when inside it."""
    target = _named("get", lambda: core.ws.resolve_user_path(path_text))
    if not target.is_file() and core.ws.root.resolve() in (cwd, *cwd.parents):
        target = _named("get", lambda: core.ws.resolve_user_path(path_text, base=cwd))
    return target


def files(core: MemoryCore) -> list[dict[str, Any]]:
    return core._with_repair(lambda: core.store.list_files())


def _named(argument: str, resolve: Callable[[], Path]) -> Path:
    """A path resolved inside the workspace; the refusal names the field (or the operation)
    it came from."""
    try:
        return resolve()
    except PathOutsideWorkspace as exc:
        field = argument != "get"  # an operation's whole argument: the operation's name
        said = "{" + argument + "}" if field else argument
        fields = (argument,) if field else ()
        raise PathOutsideWorkspace(f"{said}: {exc.message}", exc.hint, fields=fields) from None


def _to_path(to: str) -> str:
    """``--to notes.md`` means ``memory/notes.md``; ``memory/x.md`` is kept as given."""
    parts = Path(to).parts
    if parts and parts[0] == MEMORY_DIR:
        return str(Path(*parts[1:])) if len(parts) > 1 else to
    return to


def _check_size(block: str, max_kb: int) -> None:
    """Refuse a fact over ``add.max_kb``: a huge entry would push its day's file over
    ``index.max_file_mb`` and hide the facts written after it."""
    size = len(block.encode("utf-8"))
    if size > max_kb * 1024:
        raise BadInput(
            f"the fact is {size / 1024:.0f} KiB, over add.max_kb ({max_kb} KiB); nothing was"
            " written",
            hint="keep a long text as a file of its own under memory/, or raise add.max_kb",
        )


def _is_daily(target: Path) -> bool:
    return date_from_name(target.name) is not None


LOCATION_HINT = "use PATH, PATH:LINE, PATH:START-END or PATH:LINE:COUNT (lines start at 1)"


def parse_get_spec(spec: str) -> tuple[str, int, int | None]:
    """Split a citation into (path, first line, line count or None for the rest of the
    file): ``PATH``, ``PATH:LINE`` (one line), ``PATH:START-END`` (as search and context
    cite a hit) or ``PATH:LINE:COUNT``. The path itself may contain ':'; a citation quoted
    in backticks (as the context block prints it) is taken without them."""
    if len(spec) > 2 and spec[0] == spec[-1] == "`":
        spec = spec[1:-1]
    path, sep, last = spec.rpartition(":")
    first, dash, end = last.partition("-")
    if not sep or not first.isdigit() or (dash and not end.isdigit()):
        path, start, count = spec, 1, None
    elif dash:
        start, count = int(first), int(end) - int(first) + 1
        if int(end) < start:
            raise BadInput(
                f"invalid location {last!r} in {spec!r}: line {end} is before line {first}",
                hint=LOCATION_HINT,
            )
    else:
        before, sep2, middle = path.rpartition(":")
        if sep2 and middle.isdigit():
            path, start, count = before, int(middle), int(first)
        else:
            start, count = int(first), 1
    if not path:
        raise BadInput(f"invalid location {spec!r}", hint=LOCATION_HINT)
    if start < 1 or (count is not None and count < 1):
        raise BadInput(f"invalid location {spec!r}: lines start at 1", hint=LOCATION_HINT)
    return path, start, count


def _bad_location(path_text: str, is_file: Callable[[str], bool]) -> str | None:
    """What follows the file in ``path_text`` when it names a file, then a location that is
    none of the citation forms (``memory/a.md:3-x``): that location; else None."""
    at = path_text.rfind(":")
    while at > 0:
        if is_file(path_text[:at]):
            return path_text[at + 1 :]
        at = path_text.rfind(":", 0, at)
    return None
