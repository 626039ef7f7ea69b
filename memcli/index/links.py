"""A fact's links to the repository: the path-like names its text holds, and what they resolve to.

:func:`names_in` runs in the parse process (:mod:`memcli.index.parsing`) on every entry: pure,
string tests only, no pattern that can backtrack. :func:`resolve` maps those names to the
paths a repository tracks (:func:`memcli.notes.gitindex.tracked_under`); a name is only ever
compared with tracked paths, never opened, so a memory naming ``../x`` or ``/etc`` reaches
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Text between backticks on one line (a negated class: one pass).
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
#: Where a name may be: a slash, or a dot before a letter (an extension, a module).
_SEP = re.compile(r"/|\.[A-Za-z_]")
#: The first character after a word of a name.
_STOP = re.compile(r"[^\w.@+/-]")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@+/-")
_EDGES = "\"'()[]{}<>,;:.!?*"
_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@+/")
_MAX_NAME = 200
#: A name that resolves to more paths than this says too little to link.
MAX_PATHS = 5
#: The ``since`` of a fact without a time (end of its day: a change that day is not after it).
END_OF_DAY = "24:00"


def _clean(word: str, quoted: bool) -> str | None:
    """``word`` as a repository-relative name, or None: not path-like, or reaching out."""
    word = word.strip(_EDGES).removeprefix("./")
    if not word or len(word) > _MAX_NAME or not set(word) <= _CHARS:
        return None
    if word.startswith(("/", "-", ".")) or "//" in word:
        return None
    slashed = "/" in word  # jobs/ names a folder
    word = word.rstrip("/")
    parts = word.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    if slashed:
        return word
    stem, dot, ext = word.rpartition(".")
    if dot and len(stem) > 1 and 0 < len(ext) <= 8 and ext.isalpha():
        return word  # export.py
    if quoted and any(c.isalpha() for c in word):
        return word  # `payments` (a folder) or `payments.refund` (a module)
    return None


def _pathlike(text: str) -> list[str]:
    """The words of ``text`` that hold a separator (:data:`_SEP`). Each character is looked
    at once: a word is grown back to the end of the previous one at most, and the separators
    inside a word found are skipped."""
    words = []
    end = 0
    for m in _SEP.finditer(text):
        pos = m.start()
        if pos < end:
            continue
        start = pos
        while start > end and text[start - 1] in _WORD_CHARS:
            start -= 1
        stop = _STOP.search(text, pos)
        end = stop.start() if stop else len(text)
        words.append(text[start:end])
    return words


def names_in(text: str) -> list[str]:
    """The path-like names in ``text``, in order, without repeats: words with a ``/`` or a
    file extension, and backticked names (module or folder names)."""
    dot = text.find(".")
    if (dot < 0 or dot == len(text) - 1) and "/" not in text and "`" not in text:
        return []  # most entries: three quick scans
    found: dict[str, None] = {}
    for quoted in _BACKTICKED.findall(text) if "`" in text else ():
        name = _clean(quoted.strip(), True) if " " not in quoted.strip() else None
        if name:
            found[name] = None
    for word in _pathlike(text):
        name = _clean(word, False)
        if name:
            found[name] = None
    return list(found)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def confirmed_day(status: tuple[str, ...]) -> str | None:
    """The day of the last ``confirmed`` status line among ``status``, if any."""
    from memcli.notes.lifecycle import STATUS_LINE

    days = [
        day.group()
        for line in status
        if (m := STATUS_LINE.match(line)) and m.group(1) == "confirmed"
        if (day := _DAY.search(m.group(2)))
    ]
    return max(days) if days else None


def since(date: str | None, time: str | None, confirmed: str | None) -> str | None:
    """When a fact was last known true, ``YYYY-MM-DD HH:MM`` (local time): its file's date
    and entry time, or the day of its last confirmation if later; None when undated."""
    stamps = [
        f"{day} {clock}"
        for day, clock in ((date, time and time.zfill(5)), (confirmed, None))
        if day
        for clock in (clock or END_OF_DAY,)
    ]
    return max(stamps) if stamps else None


def _candidates(name: str) -> list[str]:
    """The repository paths ``name`` may stand for: itself, then a module's file or folder
    (``payments.refund``: ``payments/refund.py``)."""
    if "/" in name or "." not in name:
        return [name]
    module = name.replace(".", "/")
    return [name, module + ".py", module]


def resolve(names: Iterable[str], tracked: list[str]) -> dict[str, list[str]]:
    """Each name with the tracked files or folders it names (at most :data:`MAX_PATHS`):
    a path equal to it or ending with ``/name``, a folder of that name, a module's ``.py``."""
    files = set(tracked)
    folders = {"/".join(p.split("/")[:j]) for p in tracked for j in range(1, p.count("/") + 1)}
    by_tail = _tails(tracked)
    folder_tails = _tails(sorted(folders))
    out: dict[str, list[str]] = {}
    for name in names:
        paths: dict[str, None] = {}
        for candidate in _candidates(name):
            if candidate in files:
                paths[candidate] = None
            paths.update(dict.fromkeys(by_tail.get(candidate, ())))
            paths.update(dict.fromkeys(folder_tails.get(candidate, ())))
            if paths:
                break
        if 0 < len(paths) <= MAX_PATHS:
            out[name] = sorted(paths)
    return out


def _tails(paths: Iterable[str]) -> dict[str, list[str]]:
    """Every trailing run of each path's parts (``a/b/c``: ``a/b/c``, ``b/c``, ``c``) -> the
    paths that end so."""
    out: dict[str, list[str]] = {}
    for path in paths:
        parts = path.split("/")
        for i in range(len(parts)):
            out.setdefault("/".join(parts[i:]), []).append(path)
    return out
