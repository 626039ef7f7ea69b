"""The Typer-free path of ``memcli search`` (memcli.cli.fastpath) against the full CLI:
same arguments, same output, same exit code; anything else is left to the full CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.cli.fastpath import parse

FULL_CLI = "import sys; from memcli.cli.app import main; main()"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["search", "valkey"], ({}, "valkey", {})),
        (["search", "--json", "valkey"], ({}, "valkey", {"as_json": True})),
        (["search", "valkey cache", "-n", "3"], ({}, "valkey cache", {"limit": 3})),
        (["search", "--limit=12", "x"], ({}, "x", {"limit": 12})),
        (["search", "--limit", "2", "--limit", "5", "x"], ({}, "x", {"limit": 5})),
        (
            ["-q", "--no-color", "--debug", "-w", "/ws", "search", "x"],
            ({"quiet": True, "no_color": True, "debug": True, "workspace": "/ws"}, "x", {}),
        ),
        (["--workspace=/ws", "search", ""], ({"workspace": "/ws"}, "", {})),
        (
            ["search", "x", "--source", "ops", "--source=infra", "--type", "decision"],
            ({}, "x", {"source": ["ops", "infra"], "type_": ["decision"]}),
        ),
        (
            ["search", "--decay", "--no-decay", "--mmr", "--mmr-lambda", ".5", "x"],
            ({}, "x", {"decay": False, "mmr": True, "mmr_lambda": 0.5}),
        ),
        (
            ["search", "--format=context", "--max-tokens", "300", "--min-score", "2.", "x"],
            ({}, "x", {"fmt": "context", "max_tokens": 300, "min_score": 2.0}),
        ),
        (
            ["search", "--since", "2026-01-01", "--until=", "--path", "memory/*.md", "q"],
            ({}, "q", {"since": "2026-01-01", "until": "", "path": "memory/*.md"}),
        ),
        (["search", "--batch", "--jsonl"], ({}, None, {"batch": True, "jsonl": True})),
        (["search", "which", "cache", "-n", "2", "do"], ({}, "which cache do", {"limit": 2})),
        (
            ["search", "x", "-w", "/ws", "--debug", "--no-color", "-q"],
            ({"workspace": "/ws", "debug": True, "no_color": True, "quiet": True}, "x", {}),
        ),
        (["search", "--workspace=/ws", "x"], ({"workspace": "/ws"}, "x", {})),
        (
            ["search", "--explain", "--files", "--strategy", "vector", "x"],
            ({}, "x", {"explain": True, "files_only": True, "strategy": "vector"}),
        ),
    ],
)
def test_plain_searches_are_parsed(args: list[str], expected: tuple) -> None:
    assert parse(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["search"],  # no query
        ["search", "--help"],
        ["--help"],
        ["--version"],
        ["index"],
        ["search", "--bogus", "x"],  # an option search does not have
        ["search", "--json=yes", "x"],  # a flag given a value
        ["search", "--min-score", "1e-3", "x"],  # a number not plainly written
        ["search", "--min-score", "0.5.1", "x"],
        ["search", "--mmr-lambda", "-0.5", "x"],
        ["search", "--source", "-x", "q"],  # a value that looks like an option
        ["search", "--source"],
        ["search", "--limit=", "x"],
        ["search", "-n", "x"],  # not a count: Click's error
        ["search", "-n", "-1", "x"],
        ["search", "-n", "٣", "x"],  # a digit Python reads, not an ASCII one
        ["search", "-n"],
        ["search", "-n3", "x"],  # short option with its value attached
        ["search", "--", "-x"],
        ["search", "-x"],
        ["-w"],
        ["-wDIR", "search", "x"],
        ["search", "x", "--jsn"],
    ],
)
def test_anything_else_goes_to_the_full_cli(args: list[str]) -> None:
    assert parse(args) is None


def test_option_names_match_the_full_cli() -> None:
    """The names the fast path accepts mean the same in the Typer command tree."""
    import typer.main

    from memcli.cli import fastpath
    from memcli.cli.app import app

    group = typer.main.get_command(app)
    search = group.commands["search"]  # type: ignore[attr-defined]

    def by_name(params: list) -> dict:
        return {n: p for p in params for n in p.opts}

    top = by_name(group.params)
    for opt, dest in fastpath.GLOBAL_FLAGS.items():
        assert top[opt].is_flag and top[opt].name == dest
    for opt, dest in fastpath.GLOBAL_VALUES.items():
        assert not top[opt].is_flag and top[opt].name == dest
    kinds = {"int": "int", "float": "float", "str": "str"}
    seen = set()
    for p in search.params:
        if p.param_type_name == "argument":
            assert p.name == "query"
            continue
        if p.name == "help":
            continue
        for opt in p.opts:
            seen.add(opt)
            dest, kind = fastpath.search_options()[opt]
            assert dest == p.name, opt
            if p.is_flag and p.secondary_opts:
                assert kind == "on"
            elif p.is_flag:
                assert kind == "flag"
            elif p.multiple:
                assert kind == "list" and p.type.name == "str"
            else:
                assert kind == kinds[p.type.name], opt
        for opt in p.secondary_opts:
            seen.add(opt)
            assert fastpath.search_options()[opt] == (p.name, "off")
    assert seen == set(fastpath.search_options())  # every option of search, and nothing else


@pytest.fixture
def notes(workspace: Path) -> Path:
    for i in range(12):
        body = "\n".join(f"- item {j} of note {i}: the cache uses valkey" for j in range(6))
        (workspace / "memory" / f"note{i}.md").write_text(f"# Note {i}\n\n{body}\n")
    (workspace / "memory" / "2026-11-20.md").write_text(
        "- 10:00 [decision] pager rotation #oncall\n- 11:00 the pager rotation moves weekly\n"
    )
    subprocess.run([sys.executable, "-m", "memcli", "-w", str(workspace), "index"], check=True)
    return workspace


def _both(
    root: Path, args: list[str], env: dict[str, str] | None = None, stdin: str | None = None
) -> tuple:
    """(fast, full): exit code, stdout, stderr of ``python -m memcli`` and of the Typer CLI."""
    full_env = {**os.environ, **(env or {})}
    runs = []
    for cmd in ([sys.executable, "-m", "memcli"], [sys.executable, "-c", FULL_CLI]):
        p = subprocess.run(
            [*cmd, *args],
            capture_output=True,
            text=True,
            env=full_env,
            cwd=root,
            timeout=120,
            input=stdin,
        )
        runs.append((p.returncode, p.stdout, p.stderr))
    return tuple(runs)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["search", "--json", "valkey cache"],
        ["search", "valkey cache"],
        ["search", "-n", "1", "--json", "pager rotation"],
        ["search", "--limit=2", "valkey"],
        ["-q", "search", "valkey"],
        ["--no-color", "search", "--json", "valkey", "--json"],
        ["search", "--json", "zzzznothing"],  # exit 1 with valid JSON
        ["search", "--json", ""],  # exit 2
        ["search", "--json", "-n", "0", "valkey"],  # exit 2: the library refuses it
        ["search", "zzzznothing"],
        ["search", "--json", "--source", "ops", "valkey"],  # ops holds nothing: exit 1
        ["search", "--jsonl", "--type", "decision", "--tag", "oncall", "pager"],
        ["search", "--since", "2026-11-01", "--until=2026-11-30", "--files", "pager"],
        ["search", "--since", "last tuesday", "pager"],  # exit 2: not a date
        ["search", "--path", "memory/note1*.md", "--explain", "--json", "valkey"],
        ["search", "--decay", "--mmr", "--mmr-lambda", "0.3", "-n", "4", "--json", "valkey"],
        ["search", "--no-decay", "--no-mmr", "--min-score", "0.9", "valkey"],
        ["search", "--format", "context", "--max-tokens", "60", "valkey cache"],
        ["search", "--format", "yaml", "valkey"],  # exit 2: unknown format
        ["search", "--strategy", "vector", "--json", "valkey"],  # no model: exit 2
        ["search", "--json", "valkey", "cache", "-n", "2"],  # an unquoted query: joined
        ["search", "pager", "rotation", "--no-color", "-q"],  # global options after search
        ["search", "--json", "--files", "valkey"],  # exit 2: two output forms
        ["search", "--jsonl", "--files", "valkey"],
    ],
)
def test_fast_and_full_cli_agree(notes: Path, args: list[str]) -> None:
    assert parse(args) is not None  # each of these takes the fast path
    fast, full = _both(notes, ["-w", str(notes), *args])
    assert fast == full
    assert fast[0] in (0, 1, 2)


@pytest.mark.slow
def test_batches_agree(notes: Path) -> None:
    queries = '{"query": "valkey", "limit": 2}\n{"query": "pager rotation"}\nnot json\n'
    fast, full = _both(notes, ["-w", str(notes), "search", "--batch"], stdin=queries)
    assert fast == full
    assert fast[1].count("\n") >= 2


@pytest.mark.slow
def test_errors_agree_outside_a_workspace(tmp_path: Path) -> None:
    fast, full = _both(tmp_path, ["-w", str(tmp_path / "nowhere"), "search", "--json", "x"])
    assert fast == full and fast[0] == 3 and fast[2].startswith("Error: ")
    env = {"MEMCLI_WORKSPACE": str(tmp_path / "nowhere")}
    fast, full = _both(tmp_path, ["search", "x"], env=env)
    assert fast == full and fast[0] == 3


@pytest.mark.slow
def test_a_plain_search_does_not_import_typer(notes: Path) -> None:
    code = (
        "import sys; sys.argv = ['memcli', '-w', sys.argv[1], 'search', '--json', 'valkey']\n"
        "from memcli.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "print('typer' in sys.modules, 'click' in sys.modules, code, file=sys.stderr)"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(notes)], capture_output=True, text=True, timeout=120
    )
    assert p.stderr.split()[-3:] == ["False", "False", "0"], p.stderr
    assert '"results": [{' in p.stdout


def test_every_search_option_fills_one_field_of_search_args() -> None:
    from memcli.cli.search_args import OPTIONS, SearchArgs

    assert [o.field for o in OPTIONS] == list(SearchArgs._fields)
    flags = {o.field for o in OPTIONS if o.kind == "flag"}
    assert all(SearchArgs._field_defaults[f] is False for f in flags)
