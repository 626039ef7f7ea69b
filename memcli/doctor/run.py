"""Running every check in order; a check that breaks is itself reported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcli.doctor.hooks_cache import check_agent, check_cache, check_engine, check_hooks
from memcli.doctor.install import check_fts5, check_python, check_sqlite, check_sqlite_vec
from memcli.doctor.providers import check_provider
from memcli.doctor.report import PROBE_TIMEOUT, PROBLEM, Check, DoctorReport
from memcli.doctor.workspace import check_config, check_index, check_trust, check_workspace


def run_doctor(
    workspace: str | Path | None = None,
    *,
    network: bool = True,
    timeout: float = PROBE_TIMEOUT,
) -> DoctorReport:
    """Run every check; never raises for what it finds (a crash in a check is a problem)."""
    report = DoctorReport()
    ctx: dict[str, Any] = {"network": network, "timeout": timeout}
    steps: list[tuple[str, Callable[[dict[str, Any]], Check]]] = [
        ("python", check_python),
        ("sqlite", check_sqlite),
        ("fts5", check_fts5),
        ("workspace", lambda c: check_workspace(c, workspace)),
        ("config", check_config),
        ("trust", check_trust),
        ("sqlite_vec", check_sqlite_vec),
        ("index", check_index),
        ("embedding", lambda c: check_provider(c, "embedding")),
        ("llm", lambda c: check_provider(c, "llm")),
        ("hooks", check_hooks),
        ("agent", check_agent),
        ("engine", check_engine),
        ("cache", check_cache),
    ]
    for name, step in steps:
        try:
            check = step(ctx)
        except Exception as exc:  # a check that breaks is itself a finding
            check = Check(
                name,
                PROBLEM,
                f"the check failed: {type(exc).__name__}: {exc}",
                "run 'memcli --debug doctor' and report the error",
            )
        report.checks.append(check)
    return report
