"""Checking an installation and a workspace: ``memcli doctor`` as a library call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memcli.errors import BadInput

if TYPE_CHECKING:  # doctor's modules load when a check runs, not with every command
    from memcli.doctor import DoctorReport


def doctor(
    workspace: str | Path | None = None, *, network: bool = True, timeout: float = 3.0
) -> DoctorReport:
    """Run every check (read-only; no lock, no repair). ``network`` off: providers are not
    contacted. Works where no workspace is found: that is one of the findings."""
    from memcli.doctor import run_doctor  # only doctor needs its checks

    if timeout <= 0:
        raise BadInput("{timeout} must be more than 0 seconds", fields=("timeout",))
    return run_doctor(workspace, network=network, timeout=timeout)
