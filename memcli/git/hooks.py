"""Git hooks that keep the index in step after commits, merges, checkouts and rewrites.

Each hook is a small POSIX shell script. It first runs the hook that was
there before (moved aside as ``<name>.memcli-chained``, passed the same
arguments and stdin), then starts ``memcli --quiet -w <workspace> index`` in
the background with its output appended to ``<workspace>/.memcli/hooks.log``.
It never blocks git and never changes git's outcome: its exit status is the
chained hook's (0 without one). ``core.hooksPath`` is respected.

The hook calls the memcli that installed it (``sys.executable -m memcli``,
recorded as an absolute path) and falls back to ``memcli`` on PATH. Setting
``MEMCLI_HOOK_FOREGROUND=1`` runs the index in the foreground (still never
failing git), which scripts and tests can use to wait for it.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.errors import GitError
from memcli.git.repo import open_repo, run_git

HOOK_NAMES = ("post-commit", "post-merge", "post-checkout", "post-rewrite")
MARKER = "# memcli-hook"
CHAINED_SUFFIX = ".memcli-chained"
LOG_NAME = "hooks.log"
LOG_MAX_BYTES = 256 * 1024

_TEMPLATE = """# Re-indexes memcli workspaces after git changes files. Written by
# 'memcli hooks install'; 'memcli hooks uninstall' removes it and puts back the
# hook that was here before (kept meanwhile as {name}{suffix}).
# It never blocks or fails git: the index runs in the background and errors go
# to <workspace>/.memcli/{log}. MEMCLI_HOOK_FOREGROUND=1 waits for it instead.

memcli_python={python}
memcli_status=0
if [ -f "$0{suffix}" ] && [ -x "$0{suffix}" ]; then
    "$0{suffix}" "$@" || memcli_status=$?
fi

memcli_reindex() {{
    case $1 in
        .) memcli_ws=$PWD ;;
        /*) memcli_ws=$1 ;;
        *) memcli_ws="$PWD/$1" ;;
    esac
    [ -d "$memcli_ws/memory" ] || return 0
    [ -d "$memcli_ws/.memcli" ] || mkdir -p "$memcli_ws/.memcli" 2>/dev/null || return 0
    memcli_log="$memcli_ws/.memcli/{log}"
    # Never write through a link a repository committed: memcli replaces it when it runs.
    if [ -L "$memcli_ws/.memcli" ] || [ -L "$memcli_log" ] || [ -L "$memcli_log.1" ]; then
        memcli_log=/dev/null
    fi
    if [ -f "$memcli_log" ]; then
        memcli_size=$(wc -c <"$memcli_log" 2>/dev/null || echo 0)
        [ "${{memcli_size:-0}}" -gt {log_max} ] 2>/dev/null && mv -f "$memcli_log" "$memcli_log.1"
    fi
    if [ -x "$memcli_python" ]; then
        set -- "$memcli_python" -m memcli
    elif command -v memcli >/dev/null 2>&1; then
        set -- memcli
    else
        echo "memcli hook ({name}): no memcli: $memcli_python is missing" \\
            "and memcli is not on PATH" >>"$memcli_log" 2>/dev/null
        return 0
    fi
    if [ "${{MEMCLI_HOOK_FOREGROUND:-0}}" = 1 ]; then
        memcli_index "$@" </dev/null >>"$memcli_log" 2>&1
    else
        memcli_index "$@" </dev/null >>"$memcli_log" 2>&1 &
    fi
}}

memcli_index() {{
    (
        unset GIT_DIR GIT_INDEX_FILE GIT_WORK_TREE GIT_PREFIX GIT_OBJECT_DIRECTORY \\
            GIT_COMMON_DIR GIT_ALTERNATE_OBJECT_DIRECTORIES
        "$@" --quiet -w "$memcli_ws" index
        memcli_rc=$?
        if [ "$memcli_rc" -ne 0 ]; then
            echo "memcli hook ({name}): 'memcli index' in $memcli_ws exited with status $memcli_rc"
        fi
    )
}}

{calls}
exit $memcli_status
"""


@dataclass
class HookState:
    """One hook file as memcli sees it."""

    name: str
    path: str
    state: str  # installed, missing, foreign, modified
    chained: bool = False
    workspaces: list[str] = field(default_factory=list)
    python: str | None = None
    action: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "state": self.state,
            "chained": self.chained,
            "workspaces": self.workspaces,
            "python": self.python,
            "python_exists": bool(self.python) and os.access(self.python or "", os.X_OK),
            "action": self.action,
        }


@dataclass
class HooksReport:
    hooks_dir: str
    workspace: str  # as recorded in the hooks: relative to the work tree top, or "."
    log: str
    hooks: list[HookState] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "hooks_dir": self.hooks_dir,
            "workspace": self.workspace,
            "log": self.log,
            "hooks": [h.as_dict() for h in self.hooks],
        }


def memcli_python() -> str:
    """The interpreter running this memcli, as an absolute path ('' when unknown)."""
    exe = sys.executable
    return str(Path(exe).absolute()) if exe and Path(exe).exists() else ""


def render(name: str, python: str, workspaces: list[str]) -> str:
    """The hook script; its second line carries a checksum of the rest (edits show)."""
    calls = "\n".join(f"memcli_reindex {shlex.quote(ws)}" for ws in workspaces)
    body = _TEMPLATE.format(
        name=name,
        suffix=CHAINED_SUFFIX,
        log=LOG_NAME,
        log_max=LOG_MAX_BYTES,
        python=shlex.quote(python),
        calls=calls,
    )
    return f"#!/bin/sh\n{MARKER} {name} {_checksum(body)}\n{body}"


def _checksum(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def parse(text: str) -> tuple[str, list[str], bool] | None:
    """(python, workspaces, edited) of a memcli hook; None when the text is not one."""
    head, _, rest = text.partition("\n")
    marker, _, body = rest.partition("\n")
    if not head.startswith("#!") or not marker.startswith(MARKER + " "):
        return None
    edited = marker.rsplit(" ", 1)[-1] != _checksum(body)
    python = ""
    workspaces: list[str] = []
    for line in body.splitlines():
        try:
            if line.startswith("memcli_python="):
                python = "".join(shlex.split(line[len("memcli_python=") :]))
            elif line.startswith("memcli_reindex "):
                workspaces.extend(shlex.split(line[len("memcli_reindex ") :]))
        except ValueError:
            continue
    return python, workspaces, edited


class _Hooks:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.repo = open_repo(self.root)
        self.top = self.repo.top
        rel = os.path.relpath(self.root, self.top)
        self.workspace = Path(rel).as_posix()
        self.dir = self._hooks_dir()

    def _hooks_dir(self) -> Path:
        _, out, _ = run_git(self.repo, "rev-parse", "--git-path", "hooks")
        path = Path(out.strip())
        if not path.is_absolute():
            path = self.repo.top / path
        return Path(os.path.abspath(path))

    def report(self) -> HooksReport:
        log = self.root / ".memcli" / LOG_NAME
        return HooksReport(str(self.dir), self.workspace, str(log))

    def state(self, name: str) -> HookState:
        path = self.dir / name
        chained = os.path.lexists(str(path) + CHAINED_SUFFIX)
        if not os.path.lexists(path):
            return HookState(name, str(path), "missing", chained)
        try:
            text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        except OSError:
            text = ""
        parsed = parse(text)
        if parsed is None:
            return HookState(name, str(path), "foreign", chained)
        python, workspaces, edited = parsed
        state = "modified" if edited else "installed"
        return HookState(name, str(path), state, chained, workspaces, python)


def _write(path: Path, text: str) -> None:
    """Write an executable file atomically (a temporary file renamed over it)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o755)  # noqa: S103 - git runs a hook only if it is executable
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def install(root: Path, *, python: str | None = None) -> HooksReport:
    """Install (or update) the hooks for the workspace at ``root``; chain existing hooks."""
    hooks = _Hooks(root)
    python = memcli_python() if python is None else python
    report = hooks.report()
    try:
        hooks.dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GitError(f"cannot create the hooks folder {hooks.dir}: {exc.strerror}") from None
    for name in HOOK_NAMES:
        st = hooks.state(name)
        path = Path(st.path)
        chained = Path(st.path + CHAINED_SUFFIX)
        if st.state == "foreign":
            if os.path.lexists(chained):
                raise GitError(
                    f"cannot chain {path}: {chained.name} already exists",
                    hint="move one of them away, then run 'memcli hooks install' again",
                )
            os.rename(path, chained)
            st.chained = True
            st.action = "installed, chaining the existing hook"
            workspaces = [hooks.workspace]
        elif st.state == "modified":
            report.warnings.append(f"{path} was edited by hand; left as it is")
            st.action = "left alone (edited by hand)"
            report.hooks.append(st)
            continue
        else:
            workspaces = list(dict.fromkeys([*st.workspaces, hooks.workspace]))
            if st.state == "installed" and workspaces == st.workspaces and st.python == python:
                st.action = "already installed"
                report.hooks.append(st)
                continue
            st.action = "updated" if st.state == "installed" else "installed"
        _write(path, render(name, python, workspaces))
        st.state, st.workspaces, st.python = "installed", workspaces, python
        report.hooks.append(st)
    return report


def uninstall(root: Path) -> HooksReport:
    """Remove this workspace's hooks and restore the hooks they chained, byte for byte."""
    hooks = _Hooks(root)
    report = hooks.report()
    for name in HOOK_NAMES:
        st = hooks.state(name)
        path = Path(st.path)
        if st.state == "modified":
            report.warnings.append(f"{path} was edited by hand; left as it is")
            st.action = "left alone (edited by hand)"
        elif st.state != "installed":
            st.action = "not installed"
        else:
            rest = [w for w in st.workspaces if w != hooks.workspace]
            if rest:
                _write(path, render(name, st.python or "", rest))
                st.workspaces = rest
                st.action = "kept for other workspaces"
            else:
                path.unlink()
                if os.path.lexists(st.path + CHAINED_SUFFIX):
                    os.rename(st.path + CHAINED_SUFFIX, path)
                    st.state, st.chained = "foreign", False
                    st.action = "removed, previous hook restored"
                else:
                    st.state = "missing"
                    st.action = "removed"
                st.workspaces, st.python = [], None
        report.hooks.append(st)
    return report


def status(root: Path) -> HooksReport:
    """Each hook's state: installed, missing, foreign (not memcli's) or modified."""
    hooks = _Hooks(root)
    report = hooks.report()
    report.hooks = [hooks.state(name) for name in HOOK_NAMES]
    return report
