"""Search tokens for scripts written without spaces between words.

FTS5's ``unicode61`` tokenizer splits text at spaces and punctuation, so a run of Chinese,
Japanese, Korean or Thai characters becomes one long token: ``缓存改用`` cannot be found by
``缓存``, nor ``백업은`` by ``백업``, nor ``Valkey`` inside ``キャッシュはValkeyに``. The index
therefore keeps a second text column per chunk with *grams*: every run of such characters
as its overlapping two-character pieces (bigrams) and its single characters, and each word of
another script found inside such a run on its own. A query is cut the same way (a run of two
characters is one bigram, a longer one its bigrams, one character itself), so any part of a
run of two or more characters is found, with the ranking's usual BM25 over the pieces.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cache

#: Changes when the pieces change: the index is then rebuilt (memcli.index.indexer).
GRAMS_VERSION = 1

#: Code point ranges of scripts written without spaces between words (sorted): Thai, Lao,
#: Myanmar, Hangul, Khmer, CJK marks and numerals, Hiragana, Katakana, CJK ideographs.
RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul jamo
    (0x1780, 0x17FF),  # Khmer
    (0x3005, 0x3007),  # ideographic iteration and closing marks, number zero
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3031, 0x3035),  # vertical kana repeat marks
    (0x303B, 0x303C),  # vertical ideographic iteration mark, masu mark
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK ideographs, extension A
    (0x4E00, 0x9FFF),  # CJK ideographs
    (0xA960, 0xA97F),  # Hangul jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3134F),  # CJK ideographs, extensions B and later
)
_STARTS = [lo for lo, _ in RANGES]
_WORD = re.compile(r"[^\W_]+")


def is_unsegmented(ch: str) -> bool:
    """Whether the character ``ch`` belongs to a script written without spaces."""
    code = ord(ch)
    i = bisect_right(_STARTS, code) - 1
    return i >= 0 and code <= RANGES[i][1]


@cache
def _run() -> re.Pattern[str]:
    """Runs of unsegmented characters. Compiled on first use: the character class costs
    milliseconds to compile, and only text that holds such characters needs it."""
    return re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in RANGES) + "]+")


def has_unsegmented(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces (its distinct
    characters are looked up, no regular expression)."""
    return not text.isascii() and any(ch >= "\u0e00" and is_unsegmented(ch) for ch in set(text))


def count_unsegmented(text: str) -> int:
    """How many characters of ``text`` belong to scripts written without spaces."""
    return 0 if not has_unsegmented(text) else sum(map(len, _run().findall(text)))


def pieces(run: str) -> list[str]:
    """The search pieces of one run: its bigrams, or the run itself when shorter than 3."""
    if len(run) < 3:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def grams(text: str) -> str:
    """The grams column of ``text``: for every word holding unsegmented characters, the
    bigrams of each run, then its single characters, then the other-script words glued to
    it (``キャッシュはValkeyに`` gives ``Valkey``); empty for text without such characters."""
    if text.isascii():
        return ""
    run = _run()  # compiled once: faster than has_unsegmented's scan over a long text
    if run.search(text) is None:
        return ""
    out: list[str] = []
    for word in _WORD.findall(text):
        runs = run.findall(word)
        if not runs:
            continue
        for r in runs:
            if len(r) > 1:
                out.extend(r[i : i + 2] for i in range(len(r) - 1))
            out.extend(r)
        out.extend(w for w in run.split(word) if w)
    return " ".join(out)


def query_pieces(word: str) -> tuple[list[str], list[str]]:
    """(pieces of the unsegmented runs, the other-script words) of one query word."""
    runs = _run().findall(word)
    others = [w for w in _run().split(word) if w]
    return [p for run in runs for p in pieces(run)], others


def unsegmented_phrase(parts: tuple[str, ...]) -> tuple[str, ...]:
    """A quoted phrase's words with each run of three or more unsegmented characters as its
    bigrams: the grams column holds them in a row, so the phrase matches that text."""
    out: list[str] = []
    for part in parts:
        out.extend(pieces(part) if _run().fullmatch(part) else [part])
    return tuple(out)
