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
from functools import cache

#: Changes when the pieces change: the index is then rebuilt (memcli.index.indexer).
GRAMS_VERSION = 1

#: Characters of scripts written without spaces between words: CJK ideographs and their
#: marks, Hiragana, Katakana (full and half width), Hangul (syllables and jamo), Thai, Lao,
#: Khmer and Myanmar.
UNSEGMENTED = (
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul jamo
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1780-\u17ff"  # Khmer
    "\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c"  # ideographic marks and numerals
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility jamo
    "\u31f0-\u31ff"  # Katakana extensions
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK ideographs
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"  # Hangul
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # CJK ideographs, extensions B and later
)
_WORD = re.compile(r"[^\W_]+")


@cache
def _run() -> re.Pattern[str]:
    """Runs of unsegmented characters (compiled on first use: the character class takes
    milliseconds to compile, and ASCII text never needs it)."""
    return re.compile(f"[{UNSEGMENTED}]+")


def has_unsegmented(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces."""
    return not text.isascii() and _run().search(text) is not None


def count_unsegmented(text: str) -> int:
    """How many characters of ``text`` belong to scripts written without spaces."""
    return 0 if text.isascii() else sum(map(len, _run().findall(text)))


def pieces(run: str) -> list[str]:
    """The search pieces of one run: its bigrams, or the run itself when shorter than 3."""
    if len(run) < 3:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def grams(text: str) -> str:
    """The grams column of ``text``: for every word holding unsegmented characters, the
    bigrams of each run, then its single characters, then the other-script words glued to
    it (``キャッシュはValkeyに`` gives ``Valkey``); empty for text without such characters."""
    if not has_unsegmented(text):
        return ""
    run = _run()
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
