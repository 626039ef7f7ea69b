"""``memcli serve``: the warm engine of a workspace (foreground, or ``--detach``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import typer

from memcli.cli.app import app, state
from memcli.cli.runtime import State


@app.command()
def serve(
    ctx: typer.Context,
    detach: bool = typer.Option(False, "--detach", help="Start it in the background and return."),
    status: bool = typer.Option(False, "--status", help="Whether an engine serves this workspace."),
    stop: bool = typer.Option(False, "--stop", help="Stop the engine of this workspace."),
    idle: float | None = typer.Option(
        None,
        "--idle-timeout",
        metavar="MIN",
        help="Stop after this many minutes without a request [setting engine.idle_timeout].",
        show_default=False,
    ),
    watch: bool = typer.Option(
        True,
        "--watch/--no-watch",
        help="Re-index files as they change (memcli watch) in this process, so searches skip"
        " the full changed-files check.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Keep the index open and the embedder loaded for fast searches (a Unix socket); the
    CLI uses it when it runs. Ctrl-C stops it."""
    from memcli.enginelink import ask
    from memcli.errors import BadInput

    st = state(ctx)
    if sum((detach, status, stop)) > 1:
        raise BadInput("--detach, --status and --stop cannot be combined")
    with st.memory(lenient=True) as mem:
        root = mem.ws.root
        minutes = float(mem.settings.get("engine.idle_timeout") if idle is None else idle)
    if idle is not None and idle < 0:
        raise BadInput("--idle-timeout must be 0 (never) or more minutes")
    if status or stop:
        if stop:
            from memcli.engine.server import stop_engine

            info = stop_engine(root)
        else:
            answer = ask(root, "ping", {}, timeout=2.0)
            info = answer["result"] if answer and answer.get("ok") else None
        _report(st, info, "stopped" if stop else "running", as_json)
        if info is None:
            raise typer.Exit(1)
        return
    if detach:
        _report(st, _detach(st, root, minutes, watch), "started", as_json)
        return
    from memcli.engine.server import serve as run

    def ready(info: dict[str, Any]) -> None:
        if as_json:
            st.out.json({"event": "ready", **info})
        else:
            st.out.info(
                f"engine of {info['workspace']} ready (pid {info['pid']}): {info['socket']}"
            )

    info = run(root, minutes * 60, ready, watch=watch)
    if as_json:
        st.out.json({"event": "stopped", **info})
    else:
        st.out.info(f"engine stopped after {info['requests']} requests")


def _detach(st: State, root: Path, minutes: float, watch: bool) -> dict[str, Any] | None:
    """Start ``memcli serve`` in its own session; wait until it answers (10 s at most)."""
    from memcli.enginelink import ask
    from memcli.errors import AlreadyRunning

    answer = ask(root, "ping", {}, timeout=2.0)
    if answer and answer.get("ok"):
        running = answer["result"]
        raise AlreadyRunning(
            f"an engine already serves {root} (pid {running['pid']}, socket {running['socket']})",
            hint="memcli serve --status, or --stop",
        )
    from memcli.engine.server import check_runtime_folder
    from memcli.enginelink import engine_files

    check_runtime_folder(engine_files(root)[0].parent)  # its refusal, said here, not in a log
    from memcli.statedir import open_state, state_path

    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    log = os.fdopen(open_state(state_path(root, "engine.log"), flags), "ab")
    args = [sys.executable, "-m", "memcli", "-q", "-w", str(root), "serve"]
    args += ["--idle-timeout", str(minutes), "--watch" if watch else "--no-watch"]
    with log as err:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        answer = ask(root, "ping", {}, timeout=1.0)
        if answer and answer.get("ok"):
            info: dict[str, Any] = answer["result"]
            return info
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    from memcli.errors import IndexProblem

    raise IndexProblem(f"the engine did not start; see {log}")


def _report(st: State, info: dict[str, Any] | None, what: str, as_json: bool) -> None:
    if as_json:
        st.out.json({"engine": info})
        return
    if info is None:
        st.out.info("no engine serves this workspace")
        return
    st.out.line(
        f"engine {what}: pid {info['pid']}, {info['requests']} requests, socket {info['socket']}"
    )
