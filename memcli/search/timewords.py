"""Time expressions in a query, as a window of dates.

"yesterday", "last week", "two months ago", "in May 2023", "on October 13, 2023", "this
year", "in 2022": each becomes a range of dates, counted from an anchor day (the newest date
in the memory, or today when no file is dated), so that a question about "last week" in a
memory written last year means that memory's last week. A search boosts, never filters, the
results dated inside the window (``search.time_boost``).
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import cache
from typing import NamedTuple

MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "few": 3,
    "a few": 3, "several": 3, "couple": 2, "a couple": 2, "a couple of": 2,
}  # fmt: skip
UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_NUMBER = r"\d+|" + "|".join(sorted((re.escape(n) for n in NUMBERS), key=len, reverse=True))
_SOURCES: list[tuple[str, str]] = [
    ("iso", r"\b(\d{4})-(\d{2})-(\d{2})\b"),
    ("month_day_year", rf"\b({_MONTH})\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b"),
    ("day_month_year", rf"\b(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH})\.?,? (\d{{4}})\b"),
    ("month_year", rf"\b({_MONTH})\.?,? (\d{{4}})\b"),
    ("in_month", rf"\b(?:in|during|since|of) ({_MONTH})\b"),
    ("ago", rf"\b({_NUMBER}) (day|week|month|year)s? ago\b"),
    ("last", r"\b(last|this|past|previous) (week|weekend|month|year)\b"),
    ("day_word", r"\b(yesterday|today|tonight)\b"),
    ("year", r"\b(?:in|during|since|of) ((?:19|20)\d{2})\b"),
]


_STARTS = frozenset(MONTHS) | {
    "ago", "last", "this", "past", "previous", "yesterday", "today", "tonight",
}  # fmt: skip


def may_hold_time(query: str) -> bool:
    """A first look without regular expressions (a search compiles none it does not need):
    whether ``query`` has a word that can start a time expression, or a number."""
    words = {w.strip(".,;:!?()").lower() for w in query.split()}
    return bool(words & _STARTS) or any(w[:4].isdigit() for w in words)


@cache
def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    return [(kind, re.compile(source)) for kind, source in _SOURCES]


class Window(NamedTuple):
    """Dates ``start``..``end`` (inclusive) and the words of the query they come from."""

    start: date
    end: date
    words: str

    def holds(self, day: str | None) -> bool:
        """Whether the ISO date ``day`` falls in the window (an undated file never does)."""
        if not day:
            return False
        return self.start.isoformat() <= day[:10] <= self.end.isoformat()

    def as_dict(self) -> dict[str, str]:
        return {"from": self.start.isoformat(), "to": self.end.isoformat(), "words": self.words}


def _month(year: int, month: int, words: str) -> Window:
    following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return Window(date(year, month, 1), following - timedelta(days=1), words)


def _around(day: date, days: int, words: str) -> Window:
    """A window centred on ``day``, ``days`` wide (at least 3 days)."""
    half = max(days // 2, 1)
    return Window(day - timedelta(days=half), day + timedelta(days=half), words)


def find_window(query: str, anchor: date) -> Window | None:
    """The first time expression of ``query`` as a window of dates, counted from ``anchor``."""
    text = query.lower()
    for kind, rx in _patterns():
        m = rx.search(text)
        if m is None:
            continue
        try:
            window = _window(kind, m, anchor)
        except ValueError:  # a date that does not exist (February 30)
            continue
        if window is not None:
            return window
    return None


def _window(kind: str, m: re.Match[str], anchor: date) -> Window | None:
    words = m.group(0)
    if kind == "iso":
        day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        return _around(day, 7, words)
    if kind == "month_day_year":
        day = date(int(m.group(3)), MONTHS[m.group(1)], int(m.group(2)))
        return _around(day, 7, words)
    if kind == "day_month_year":
        day = date(int(m.group(3)), MONTHS[m.group(2)], int(m.group(1)))
        return _around(day, 7, words)
    if kind == "month_year":
        return _month(int(m.group(2)), MONTHS[m.group(1)], words)
    if kind == "in_month":
        month = MONTHS[m.group(1)]
        year = anchor.year if month <= anchor.month else anchor.year - 1  # the latest one
        return _month(year, month, words)
    if kind == "year":
        year = int(m.group(1))
        return Window(date(year, 1, 1), date(year, 12, 31), words)
    if kind == "ago":
        count = int(m.group(1)) if m.group(1).isdigit() else NUMBERS[m.group(1)]
        days = UNIT_DAYS[m.group(2)]
        return _around(anchor - timedelta(days=count * days), days, words)
    if kind == "last":
        which, unit = m.group(1), m.group(2)
        if unit == "weekend":
            unit = "week"
        if which == "this":
            return Window(anchor - timedelta(days=UNIT_DAYS[unit]), anchor, words)
        if unit == "year":
            return Window(date(anchor.year - 1, 1, 1), date(anchor.year - 1, 12, 31), words)
        if unit == "month":
            first = anchor.replace(day=1) - timedelta(days=1)
            return _month(first.year, first.month, words)
        return Window(anchor - timedelta(days=14), anchor - timedelta(days=1), words)
    if kind == "day_word":
        day = anchor - timedelta(days=1) if m.group(1) == "yesterday" else anchor
        return Window(day - timedelta(days=1), day + timedelta(days=1), words)
    return None
