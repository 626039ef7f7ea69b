"""What doctor reports: one :class:`Check` per subject, gathered in a :class:`DoctorReport`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memcli.version import __version__

OK, NOTE, PROBLEM = "ok", "note", "problem"
PROBE_TIMEOUT = 3.0


@dataclass
class Check:
    """The outcome of one check."""

    name: str
    status: str
    summary: str
    hint: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "hint": self.hint,
            "details": self.details,
        }


@dataclass
class DoctorReport:
    checks: list[Check] = field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status == PROBLEM]

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": __version__,
            "ok": not self.problems,
            "problems": len(self.problems),
            "checks": [c.as_dict() for c in self.checks],
        }
