"""Checks of the git hooks and the global embedding cache."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from memcli.doctor.report import NOTE, OK, PROBLEM, Check
from memcli.git import hooks
from memcli.index.embedcache import cache_stats
from memcli.notes.workspace import find_git_root


def check_hooks(ctx: dict[str, Any]) -> Check:
    ws = ctx.get("ws")
    if ws is None:
        return Check("hooks", NOTE, "no workspace", details={"hooks": []})

    if find_git_root(ws.root) is None:
        return Check(
            "hooks",
            NOTE,
            "not a git repository: no hooks",
            "memcli init --git --hooks",
            {"hooks": []},
        )

    report = hooks.status(ws.root)
    states = {h.name: h.state for h in report.hooks}
    details = {"hooks_dir": report.hooks_dir, "hooks": [h.as_dict() for h in report.hooks]}
    broken = [
        h.name
        for h in report.hooks
        if h.state == "modified"
        or (h.state == "installed" and h.python and not os.access(h.python, os.X_OK))
    ]
    if broken:
        return Check(
            "hooks",
            PROBLEM,
            f"hooks need reinstalling: {', '.join(broken)} (edited, or their Python is gone)",
            "memcli hooks install",
            details,
        )
    installed = [n for n, s in states.items() if s == "installed"]
    if len(installed) == len(states):
        return Check("hooks", OK, f"installed: {', '.join(installed)}", details=details)
    missing = [n for n, s in states.items() if s != "installed"]
    what = "not installed" if not installed else f"missing: {', '.join(missing)}"
    return Check(
        "hooks",
        NOTE,
        f"{what} (the index is refreshed by the next command instead)",
        "memcli hooks install",
        details,
    )


def check_cache(ctx: dict[str, Any]) -> Check:
    stats = cache_stats(check=True)
    limit_mb = float(ctx["settings"].get("cache.max_mb"))
    details = {**stats, "max_mb": limit_mb}
    size_mb = stats["bytes"] / (1024 * 1024)
    n = stats["entries"]
    summary = f"{n} vector{'' if n == 1 else 's'}, {size_mb:.1f} MiB of {limit_mb:g} MiB"
    summary += f" ({stats['path']})"
    if stats["damage"]:
        return Check(
            "cache",
            PROBLEM,
            f"damaged ({stats['damage']}): {stats['path']}",
            "the next embedding replaces it with a new one; or delete that file",
            details,
        )
    if size_mb > limit_mb * 1.1:
        return Check(
            "cache", NOTE, summary + ": over the limit until the next write evicts", details=details
        )
    return Check("cache", OK, summary, details=details)


def check_agent(ctx: dict[str, Any]) -> Check:
    """The agent hooks' log: the latest failure, if any (hooks never fail the agent, so
    this is where a broken one shows)."""
    from memcli.agents.claude_plugin import rows as plugin_rows
    from memcli.agents.setup import status
    from memcli.agentsetup.hooklog import read_log  # no imports beyond the standard library
    from memcli.agentsetup.installed import scope_warnings, server_problems

    ws = ctx.get("ws")
    if ws is None:
        return Check("agent", NOTE, "no workspace", details={"errors": []})
    lines = read_log(ws.root, 50)
    errors = [line for line in lines if " error: " in line]
    details = {"log": str(ws.state_dir / "agent.log"), "errors": errors[-5:]}
    # an installed MCP server that cannot start (no MCP SDK, a memcli that is gone): the
    # agent shows it failed, or quietly goes without memory's tools
    installed = status(ws.root, ws.root) + plugin_rows(ws.root)  # the plugin's too
    if any(r["scope"] == "plugin" for r in installed):
        details["plugins"] = [r["plugin"] for r in installed if r["scope"] == "plugin"]
    broken = server_problems(installed)
    twice = scope_warnings(installed)
    if broken or twice:
        details["installed"] = broken + twice
    if broken:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        return Check("agent", PROBLEM, broken[0] + more, "memcli agent status", details)
    if not lines:
        where = [f"{r['agent']} ({r['scope']})" for r in installed if r["hooks"] or r["mcp"]]
        if where:  # installed: what is missing is a session of the agent, not an install
            said = f"installed for {', '.join(where)}; no agent hook has run here yet"
            return Check("agent", NOTE, said, None, details)
        return Check("agent", NOTE, "no agent hook has run here", "memcli agent install", details)
    if lines[-1] in errors:
        return Check(
            "agent",
            PROBLEM,
            f"the last agent hook failed: {lines[-1]}",
            "memcli agent status shows the log",
            details,
        )
    if errors:
        return Check("agent", NOTE, f"{len(errors)} earlier hook failure(s) logged", None, details)
    return Check("agent", OK, f"hooks ran without errors ({lines[-1][:19]} last)", details=details)


def check_engine(ctx: dict[str, Any]) -> Check:
    """``memcli serve``: running and answering, absent, or a socket that does not answer; a
    running engine that a client gave up on since it started (it answered in process then,
    after waiting for ``MEMCLI_ENGINE_TIMEOUT``) is a note."""
    from memcli.enginelink import ask, engine_files

    ws = ctx.get("ws")
    if ws is None:
        return Check("engine", NOTE, "no workspace", details={"socket": None})
    sock, _ = engine_files(ws.root)
    details: dict[str, Any] = {"socket": str(sock)}
    if not sock.exists():
        return Check(
            "engine", NOTE, "not running: searches run in process", "memcli serve --detach", details
        )
    answer = ask(ws.root, "ping", {}, timeout=1.0)
    if answer and answer.get("ok"):
        info = answer["result"]
        details.update(info)
        if info.get("watch_ready"):
            how = "watching: searches run the quick freshness check"
        elif info.get("watching"):
            how = "its watcher is starting or retrying: searches check as index.freshness says"
        else:
            how = "not watching: searches check as index.freshness says"
        summary = f"running, pid {info['pid']}; {how}"
        failed = _engine_failure(ws.root, float(info.get("started") or 0))
        if failed:
            details["last_failure"] = failed
            return Check(
                "engine",
                NOTE,
                f"{summary}; since it started, a client gave up on it: {failed}",
                "a busy or stopped engine costs each call MEMCLI_ENGINE_TIMEOUT (2 s)",
                details,
            )
        return Check("engine", OK, summary, details=details)
    return Check(
        "engine",
        PROBLEM,
        f"an engine socket does not answer ({sock}); commands answer in process",
        "memcli serve --stop, or start a new one: memcli serve --detach",
        details,
    )


def _engine_failure(root: Path, since: float) -> str | None:
    """What a client noted when the engine did not answer it (:mod:`memcli.enginelink`),
    if it did so after ``since`` (epoch seconds)."""
    from memcli.enginelink import failure_marker
    from memcli.statedir import read_text

    marker = failure_marker(root)
    try:
        mtime = os.lstat(marker).st_mtime
        if mtime <= since:
            return None
        when = datetime.fromtimestamp(mtime).isoformat(timespec="seconds")
        return f"{read_text(marker, 4096).strip()} ({when})"  # a planted link: not followed
    except OSError:
        return None
