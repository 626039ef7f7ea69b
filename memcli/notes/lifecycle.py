"""A fact's life, written in the Markdown: status lines under an entry, and what they mean.

A status line is a nested list item right under an entry, a word then its details::

    - 10:02 [decision] Use Redis for the session cache. #infra
      - superseded 2026-11-25 by 9a8b7c6d
    - 14:10 [decision] Use Valkey for the session cache. #infra
      - supersedes 3f2a9c1b
      - confirmed 2026-11-25
    - 09:00 [fact] The staging password rotates weekly.
      - retracted 2026-11-25: it rotates monthly
    - 09:05 The build server is down for maintenance.
      - expires 2026-12-01
    - 09:06 [procedure] Always run make deploy with --force.
      - review 2026-11-25: reads as an instruction to the agent

GitHub renders them as sub-items; ``git diff`` shows one added line per change; two clones
that change the same entry differently each add a line, which the union merge of
``memcli sync`` keeps both of (status lines only add up). They are not part of the fact's
text (its id stays the same) and may be written by hand.

A fact's **id** is the first 8 hex digits of its duplicate key
(:func:`memcli.notes.entries.fact_key`): stable while its text is, whatever the file or line.
"""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
import re
from datetime import date
from typing import NamedTuple

__all__ = [
    "ID_CHARS",
    "KINDS",
    "STATUS_LINE",
    "Status",
    "owner_of",
    "status_line",
    "status_of",
]

ID_CHARS = 8
#: The words a status line starts with.
KINDS = (
    "superseded",
    "supersedes",
    "retracted",
    "confirmed",
    "corroborated",
    "expires",
    "review",
)
STATUS_LINE = re.compile(r"^[ \t]+[-*+] (" + "|".join(KINDS) + r")\b:?[ \t]*(.*)$")
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_ID = re.compile(r"\bby ([0-9a-f]{4,40})\b")

ACTIVE = "active"
SUPERSEDED = "superseded"
RETRACTED = "retracted"
EXPIRED = "expired"
REVIEW = "review"
#: States left out of a search unless asked for (expired is decided at search time).
INACTIVE = (SUPERSEDED, RETRACTED)


class Status(NamedTuple):
    """What an entry's status lines say."""

    state: str = ACTIVE  # active, superseded, retracted or review (expiry is separate)
    expires: str | None = None  # YYYY-MM-DD
    confirmed: int = 0  # times a person vouched for it
    corroborated: int = 0  # times it was added again
    successor: str | None = None  # id of the fact that superseded it
    reason: str | None = None  # why it was retracted or is under review

    @property
    def plain(self) -> bool:
        """No status line changes how it is indexed (the usual case)."""
        return self == PLAIN

    def state_on(self, day: date) -> str:
        """The state on ``day``: ``expired`` once past the expiry date, else :attr:`state`."""
        if self.state == ACTIVE and self.expires is not None and self.expires < day.isoformat():
            return EXPIRED
        return self.state


PLAIN = Status()


def without_status(text: str) -> str:
    """``text`` without its status lines: what is scored, as the index searches it."""
    if "\n " not in text and "\n\t" not in text:
        return text
    return "\n".join(line for line in text.split("\n") if not STATUS_LINE.match(line))


def status_of(lines: tuple[str, ...] | list[str]) -> Status:
    """The status that ``lines`` (an entry's status lines, in order) give it.

    Retracted wins over superseded; a confirmation made on or after a review closes the
    review; the latest ``expires`` counts.
    """
    state = ACTIVE
    expires = successor = reason = None
    confirmed = corroborated = 0
    review_day: str | None = None
    confirmed_day = ""
    for line in lines:
        m = STATUS_LINE.match(line)
        if not m:
            continue
        kind, rest = m.group(1), m.group(2).strip()
        day = _DATE.search(rest)
        when = day.group(1) if day else ""
        if kind == "retracted":
            state, reason = RETRACTED, _after_colon(rest)
        elif kind == "superseded" and state != RETRACTED:
            state = SUPERSEDED
            found = _ID.search(rest)
            successor = found.group(1) if found else None
        elif kind == "confirmed":
            confirmed += 1
            confirmed_day = max(confirmed_day, when)
        elif kind == "corroborated":
            corroborated += 1
        elif kind == "expires" and when:
            expires = max(expires or "", when)
        elif kind == "review":
            review_day, reason = when or "0000-00-00", _after_colon(rest) or reason
    if state == ACTIVE and review_day is not None and confirmed_day < review_day:
        state = REVIEW
    return Status(state, expires, confirmed, corroborated, successor, reason)


#: ``(3f2a9c1b)``, right after a status line's word and date: the fact the line belongs to.
_OWNER = re.compile(r"^[ \t]+[-*+] [a-z]+\b[ \t]*(?:\d{4}-\d{2}-\d{2}[ \t]+)?\(([0-9a-f]{8})\)")


def owner_of(line: str) -> str | None:
    """The id a status line names as its fact's (:func:`status_line`), if it names one."""
    m = _OWNER.match(line)
    return m.group(1) if m else None


def _after_colon(text: str) -> str | None:
    _, sep, after = text.partition(":")
    return after.strip() or None if sep else None


def expiry_date(value: str, today: date) -> date:
    """``30d``, ``6w``, ``3m`` (30 days a month), ``1y``, ``in 2 weeks``, ``tomorrow`` or a
    YYYY-MM-DD: the one date grammar (:mod:`memcli.notes.dates`), a bare count ahead of
    ``today``."""
    from memcli.notes.dates import day_of

    return day_of(value, "expires", today, ahead=True)


def status_line(
    kind: str, detail: str = "", day: date | None = None, fact: str | None = None
) -> str:
    """One status line (with its indent and newline): ``  - KIND DATE (FACT) DETAIL``.
    ``fact``: the id of the fact it is written under, for a line written after the fact:
    git's union merge can move such a line under a neighbour, and the id names its owner
    (:func:`owner_of`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown status {kind!r}")
    parts = [kind]
    if day is not None:
        parts.append(day.isoformat())
    if fact is not None and len(fact) >= ID_CHARS:
        parts.append(f"({fact[:ID_CHARS]})")
    line = " ".join(parts)
    if detail:
        line += detail if detail.startswith((":", " ")) else f" {detail}"
    return f"  - {line}\n"
