"""The CI guard's verdicts (benchmarks/bench_guard.py): a count more than 15% over its
baseline fails, and so does a commit that raises a baseline that much without a reason."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def guard() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_guard", BENCH / "bench_guard.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


def test_within_tolerance_passes(guard: ModuleType) -> None:
    assert guard.compare({"--help": 114}, {"--help": 100}, {}, "") == []


def test_growth_over_tolerance_fails(guard: ModuleType) -> None:
    failures = guard.compare({"--help": 116, "mcp initialize": 90}, {"--help": 100}, {}, "")
    assert len(failures) == 1 and "--help grew 16.0%" in failures[0]


def test_an_extra_statement_per_file_or_a_sleep_fails(guard: ModuleType) -> None:
    """Statements are counted exactly: 1% more (an extra query per file of 100) fails;
    a sleep fails past 20 ms more, whatever the instructions say."""
    base = {"index: SQL statements": 5800, "hook: ms slept": 0.0}
    assert (
        guard.compare({"index: SQL statements": 5820, "hook: ms slept": 15.0}, base, {}, "") == []
    )
    failures = guard.compare({"index: SQL statements": 5900, "hook: ms slept": 50.0}, base, {}, "")
    assert len(failures) == 2
    assert "index: SQL statements grew 1.7%" in failures[0]
    assert "hook: ms slept grew 50.0" in failures[1]


def test_raised_baseline_needs_a_reason(guard: ModuleType) -> None:
    before, base = {"--help": 100}, {"--help": 130}
    assert guard.compare({"--help": 130}, base, before, "Slower help") != []
    message = "Rich tables in help\n\nbench-guard: help renders the new tables\n"
    assert guard.compare({"--help": 130}, base, before, message) == []
    assert guard.compare({"--help": 130}, base, before, "bench-guard:   \n") != []


def test_lowered_baseline_needs_no_reason(guard: ModuleType) -> None:
    assert guard.compare({"--help": 80}, {"--help": 80}, {"--help": 100}, "faster") == []


def test_reason_lines(guard: ModuleType) -> None:
    assert guard.reason_in("x\n  bench-guard: a\nbench-guard: b\n") == "a; b"
    assert guard.reason_in("no reason here") is None
