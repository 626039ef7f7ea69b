"""Path confinement: user paths (--to, --ns, get, index PATH) never reach outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcli.errors import MemcliError
from memcli.memory import Memory
from memcli.notes.workspace import Workspace
from tests.conftest import Cli
from tests.test_reliability import everything_under, tree_digest


@pytest.fixture
def layout(tmp_path: Path, workspace: Path) -> dict[str, Path]:
    """A workspace next to an ``outside`` folder, with links from memory/ pointing out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("- outside secret\n")
    mem = workspace / "memory"
    (mem / "out").symlink_to(outside, target_is_directory=True)  # folder link out
    (mem / "up").symlink_to("..", target_is_directory=True)  # link to the workspace root
    (mem / "secret.md").symlink_to(outside / "secret.md")  # file link out
    (mem / "sub").mkdir()
    from memcli.index.seal import user_key

    user_key(create=True)  # in the user cache, as after a first run: it seals each index
    return {"outside": outside, "workspace": workspace, "tmp": tmp_path}


def _snapshot(paths: dict[str, Path]) -> tuple[object, ...]:
    home = Path(os.environ["HOME"])
    return (
        tree_digest(paths["outside"]),
        sorted(os.listdir(paths["tmp"])),
        everything_under(home),
        sorted(os.listdir(paths["tmp"].parent)),
    )


OUTSIDE_TO = [
    "../x.md",
    "../../x.md",
    "memory/../../x.md",
    "sub/../../../x.md",
    "out/x.md",  # through the folder link
    "out/secret.md",
    "secret.md",  # the file link itself
    "up/../x.md",
    "~/x.md",
    "{outside}/x.md",
    "{tmp}/x.md",
    "/tmp/../{tmp}/x.md",
    "{workspace}/../x.md",
    "{workspace}/memcli-state.md",  # inside the workspace but not under memory/
    "../ws/.memcli/x.md",
]
OUTSIDE_NS = ["..", "../x", "/abs", "a/b", "out", ".", "~", "x/../..", "up"]
OUTSIDE_GET = [
    "../outside/secret.md",
    "{outside}/secret.md",
    "memory/out/secret.md",
    "memory/secret.md",
    "/etc/passwd",
    "memory/../../outside/secret.md",
    "~/.bashrc",
]
OUTSIDE_INDEX = ["..", "{outside}", "memory/out", "../outside/secret.md", "/"]


def _fill(text: str, paths: dict[str, Path]) -> str:
    for key, value in paths.items():
        text = text.replace("{" + key + "}", str(value))
    return text


@pytest.mark.parametrize(
    ("args", "value"),
    [(("add", "--to"), v) for v in OUTSIDE_TO]
    + [(("add", "--ns"), v) for v in OUTSIDE_NS]
    + [(("get",), v) for v in OUTSIDE_GET]
    + [(("index",), v) for v in OUTSIDE_INDEX],
    ids=lambda x: " ".join(x) if isinstance(x, tuple) else x,
)
def test_cli_paths_outside_are_refused(
    cli: Cli, layout: dict[str, Path], args: tuple[str, ...], value: str
) -> None:
    before = _snapshot(layout)
    ws_before = tree_digest(layout["workspace"] / "memory")
    argv = [*args, _fill(value, layout)]
    if args[0] == "add":
        argv.append("a fact that must not escape")
    r = cli(*argv)
    assert r.exit_code == 2, (argv, r.exit_code, r.stderr)
    assert r.stderr.startswith("Error: ") and "Traceback" not in r.stderr
    assert _snapshot(layout) == before  # nothing created or changed outside
    assert tree_digest(layout["workspace"] / "memory") == ws_before  # nor inside


def test_paths_inside_still_work(cli: Cli, layout: dict[str, Path]) -> None:
    """The refusals above are not a blanket ban: normal paths, absolute ones inside too."""
    ws = layout["workspace"]
    for to in ("notes.md", "memory/notes2.md", "sub/deep/x.md", f"{ws}/memory/abs.md"):
        r = cli("add", "--to", to, "--json", f"fact for {to}")
        assert r.exit_code == 0, (to, r.stderr)
    r = cli("add", "--ns", "team-a", "--json", "namespaced")
    assert r.exit_code == 0 and r.json()["path"].startswith("memory/team-a/")
    assert cli("get", "memory/notes.md").exit_code == 0
    assert cli("get", f"{ws}/memory/abs.md").exit_code == 0
    assert cli("index", "memory/sub").exit_code == 0


# -- property: random path strings ------------------------------------------------

SEGMENTS = [
    "..", ".", "", "memory", "out", "up", "secret.md", "sub", "x.md", "MEMORY.md", "~", " ",
    "...", "..md", ".memcli", "a" * 300, "%2e%2e", "\u2025", "\uff0e\uff0e", "\\..", "*", "-",
    "x\x00y", "new\nline", "{outside}", "{workspace}", "{tmp}",
]  # fmt: skip


@st.composite
def path_strings(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(SEGMENTS) | st.text(max_size=12), max_size=8))
    text = "/".join(parts)
    prefix = draw(st.sampled_from(["", "", "/", "~/", "{outside}/", "{workspace}/", "//"]))
    suffix = draw(st.sampled_from(["", ".md", "/x.md"]))
    return prefix + text + suffix


@pytest.mark.slow
@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    raw=path_strings(), ns=st.sampled_from(SEGMENTS) | st.text(max_size=10), in_memory=st.booleans()
)
def test_random_paths_never_escape(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch, raw: str, ns: str, in_memory: bool
) -> None:
    ws = layout["workspace"]
    # Relative paths of get and index are also tried from the current directory.
    monkeypatch.chdir(ws / "memory" if in_memory else layout["tmp"])
    path = _fill(raw, layout)
    namespace = _fill(ns, layout)
    before = _snapshot(layout)
    mem = Memory(Workspace(ws), Memory.open(ws).settings)
    created: list[str] = []
    try:
        for call in (
            lambda: mem.add("random path fact", to=path, index=False),
            lambda: mem.add("random ns fact", namespace=namespace, index=False),
            lambda: mem.get(path),
            lambda: mem.index([path]),
        ):
            try:
                result = call()
            except MemcliError:
                continue  # refused with a typed error (exit 2/3): fine
            if hasattr(result, "path") and hasattr(result, "added"):
                created.append(result.path)
    finally:
        mem.close()
    assert _snapshot(layout) == before, (path, namespace)
    for rel in created:  # whatever was written is a Markdown file under memory/
        real = (ws / rel).resolve()
        assert (ws / "memory").resolve() in real.parents and real.suffix == ".md", rel
    state = {p.split("/")[0] for p in everything_under(ws)}
    assert state <= {"memory", ".memcli", ".gitignore", "memcli.toml"}, state
