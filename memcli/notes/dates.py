"""The one grammar of the dates a flag takes: ``--since`` and ``--until`` (search, diff, log)
and ``--expires`` (add).

A date is an ISO date (``2026-11-20``); ``today``, ``yesterday`` or ``tomorrow``; a count of
days, weeks, months (30 days) or years (365 days), compact (``7d``, ``2w``, ``3m``, ``1y``) or
in words (``2 days ago``, ``in 3 weeks``, ``a month ago``); or ``last``/``next`` and a unit
(``last week``). A count without ``ago`` or ``in`` goes back from today for ``--since`` and
``--until`` and forward for ``--expires``. The words are read one by one (no pattern with
nested repetition), in time linear in the text.
"""

from __future__ import annotations

from datetime import date, timedelta

#: What the flags' errors and docs/commands.md ("Dates") say a date may be.
GRAMMAR = (
    "a date YYYY-MM-DD, today, yesterday, tomorrow, 7d, 2w, 3m, 1y, '2 days ago',"
    " 'in 3 weeks' or 'last week'"
)
HINT = "see 'Dates' in docs/commands.md"
_UNITS = {"d": 1, "day": 1, "w": 7, "week": 7, "m": 30, "month": 30, "y": 365, "year": 365}
_COUNTS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12,
}  # fmt: skip
_DAYS = {"today": 0, "yesterday": -1, "tomorrow": 1}


def parse_day(text: str, today: date, *, ahead: bool = False) -> date | None:
    """The day ``text`` names, counted from ``today`` (``ahead``: a bare count is in the
    future, as for ``--expires``); None when it is none of the forms of :data:`GRAMMAR`."""
    words = text.lower().split()
    if len(words) == 1:
        try:
            return date.fromisoformat(words[0])
        except ValueError:
            pass
        if words[0] in _DAYS:
            return today + timedelta(days=_DAYS[words[0]])
    sign = 1 if ahead else -1
    if words and words[-1] == "ago":
        sign, words = -1, words[:-1]
    elif words and words[0] == "in":
        sign, words = 1, words[1:]
    elif len(words) == 2 and words[0] in ("last", "next"):
        sign, words = (-1 if words[0] == "last" else 1), ["1", words[1]]
    if len(words) == 1:  # compact: 7d, 2w
        digits = len(words[0]) - len(words[0].lstrip("0123456789"))
        words = [words[0][:digits], words[0][digits:]]
    if len(words) != 2:
        return None
    count, unit = words
    n = int(count) if count.isascii() and count.isdigit() and len(count) <= 5 else None
    n = _COUNTS.get(count) if n is None else n
    days = _UNITS.get(unit.removesuffix("s") if len(unit) > 1 else unit)
    if n is None or days is None:
        return None
    try:
        return today + timedelta(days=sign * n * days)
    except OverflowError:
        return None


def day_of(text: str, field: str, today: date | None = None, *, ahead: bool = False) -> date:
    """:func:`parse_day`, or BadInput naming ``field`` and the grammar."""
    found = parse_day(text, today or date.today(), ahead=ahead)
    if found is None:
        from memcli.errors import BadInput  # an error's import, on an error only

        raise BadInput(f"{{{field}}} expects {GRAMMAR}; got {text!r}", hint=HINT, fields=(field,))
    return found
