"""docs/tour.md's tour and ``make demo`` are one thing: the tour is a run of ``.ci/demo``."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

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
