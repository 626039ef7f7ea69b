"""One printer per output form of memcli search, whoever answered (memcli.cli.search_output):
the workspace's engine sends the view a search in process makes, and both paths print it
through the same forms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memcli.cli import search_output, searching, via_engine
from memcli.cli.runtime import State
from memcli.cli.search_args import SearchArgs
from memcli.engine.engine import Engine
from memcli.enginelink import PROTOCOL, client_env
from memcli.memory import Memory
from memcli.search.options import SearchRequest
from memcli.version import __version__
from tests.conftest import Cli


@pytest.fixture
def ws(cli: Cli, workspace: Path) -> Path:
    for text in ("Use Valkey for the session cache.", "The cache keeps sessions an hour."):
        assert cli("add", text).exit_code == 0
    return workspace


def _engine_search(root: Path, **args: Any) -> dict[str, Any]:
    engine = Engine(root, idle_timeout=60)
    try:
        request = {"v": PROTOCOL, "version": __version__, "op": "search", "env": client_env()}
        answer = engine.answer({**request, "args": args})
    finally:
        engine.close()
    assert answer["ok"], answer
    result: dict[str, Any] = json.loads(json.dumps(answer["result"]))  # as on the wire
    assert result.pop("notices") == []
    return result


def test_the_engine_sends_the_view_a_search_in_process_makes(ws: Path) -> None:
    request = SearchRequest(limit=5)
    sent = _engine_search(ws, query="session cache", request=request.payload(), fmt="text")
    context = _engine_search(ws, query="session cache", request=request.payload(), fmt="context")
    with Memory.open(ws) as mem:
        opts = mem.search_options(request)
        assert sent == mem.search("session cache", opts).view()
        assert context == mem.context("session cache", opts).view()
    assert sent["result"]["results"] and context["context"]["found"]


@pytest.mark.parametrize(
    "args",
    [
        SearchArgs(),
        SearchArgs(fmt="text"),
        SearchArgs(as_json=True),
        SearchArgs(jsonl=True),
        SearchArgs(files_only=True),
        SearchArgs(fmt="context"),
    ],
)
def test_in_process_and_through_the_engine_the_same_printer_prints(
    ws: Path,
    args: SearchArgs,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shown: list[tuple[str, dict[str, Any]]] = []
    real = search_output.show

    def show(out: Any, view: dict[str, Any], fmt: str, given: Any) -> int:
        shown.append((fmt, view))
        return real(out, view, fmt, given)

    monkeypatch.setattr(search_output, "show", show)
    monkeypatch.setenv("MEMCLI_ENGINE", "off")
    st = State(workspace=str(ws))
    assert searching.run(st, "session cache", args) == 0
    in_process = capsys.readouterr()
    fmt = shown[0][0]
    sent = _engine_search(ws, query="session cache", request=args.request().payload(), fmt=fmt)
    monkeypatch.setattr(via_engine, "_ask", lambda *_: {"notices": [], **sent})
    assert via_engine.search_via_engine(st, "session cache", args.request(), fmt, args) == 0
    assert capsys.readouterr() == in_process
    assert [f for f, _ in shown] == [fmt, fmt]
