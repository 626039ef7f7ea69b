"""docs/tour.md's tour and ``make demo`` are one thing: the tour is a run of ``.ci/demo``."""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.devtools import ROOT, load_gentour

gentour = load_gentour()


TOUR = ROOT / "docs" / "tour.md"


def tour_commands() -> list[str]:
    tour = gentour.page_tour(TOUR.read_text(encoding="utf-8"))
    return [m.group(1) for m in re.finditer(r"^\$ (.*)$", tour, re.MULTILINE)]


def test_the_tour_shows_every_command_the_demo_runs() -> None:
    demo = gentour.demo_commands((ROOT / ".ci" / "demo").read_text(encoding="utf-8"))
    assert len(demo) >= 11
    assert tour_commands() == demo


@pytest.mark.slow
def test_the_tour_is_what_the_demo_prints(tmp_path: Path) -> None:
    bin_dir = str(Path(sys.executable).parent)  # the memcli of this environment
    fresh = gentour.fresh_block(
        {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    )
    current = gentour.page_tour(TOUR.read_text(encoding="utf-8"))
    assert gentour.masked(current) == gentour.masked(fresh), "run 'make tour'"


def test_masking_leaves_the_rest_alone() -> None:
    """The comparison ignores the date and the clock only: any other change is seen."""
    a = "- 06:25 [decision] Use Valkey. #infra\nlast indexed: 2026-11-25T06:25:50\n1\t0.03\n"
    b = "- 09:41 [decision] Use Valkey. #infra\nlast indexed: 2027-01-02T09:41:07\n1\t0.11\n"
    assert gentour.masked(a) == gentour.masked(b)
    assert gentour.masked(a) != gentour.masked(a.replace("Valkey", "Redis"))
    assert gentour.masked(a) != gentour.masked(a.replace("1\t", "2\t"))


@pytest.mark.slow
def test_the_demo_prints_each_command_as_typed(tmp_path: Path) -> None:
    """make demo's `$` lines are the script's commands, quoted as the shell needs them (a
    line pasted from a terminal runs as shown: no glob from an unquoted '?'); a here-document
    shows its text as the command's output."""
    bin_dir = str(Path(sys.executable).parent)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    printed = re.findall(r"^\$ (.*)$", gentour.run_demo(env), re.MULTILINE)
    demo = gentour.demo_commands((ROOT / ".ci" / "demo").read_text(encoding="utf-8"))
    typed = [re.sub(r" <<'\w+'$", "", c) for c in demo]
    assert [shlex.split(p) for p in printed] == [shlex.split(c) for c in typed]
    for line in printed:  # what the shell would read as a glob is quoted
        words = shlex.shlex(line, posix=False, punctuation_chars=False)
        words.whitespace_split = True
        assert not [w for w in words if w[0] not in "\"'" and set(w) & set("?*[")], line
    assert 'memcli search "which cache do we use for sessions?"' in printed


def test_the_demo_has_no_hidden_step() -> None:
    """After its set-up, every line of .ci/demo is a step the tour shows (or the text of a
    here-document one of them reads)."""
    script = (ROOT / ".ci" / "demo").read_text(encoding="utf-8").splitlines()
    body = script[script.index('cd "$ws"') + 1 :]
    heredoc = None
    for line in body:
        if heredoc is not None:
            heredoc = None if line == heredoc else heredoc
            continue
        assert not line.strip() or line.startswith("run "), line
        opened = re.search(r"<<'(\w+)'$", line)
        heredoc = opened.group(1) if opened else None
