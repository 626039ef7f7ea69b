"""Where a visible character starts: cutting text without splitting one in two."""

from __future__ import annotations

import unicodedata

__all__ = ["grapheme_start"]

#: Characters that join the one before them into one visible character: zero-width joiner,
#: variation selectors, emoji skin tones and tag characters.
_JOINING = frozenset({0x200D, *range(0xFE00, 0xFE10), *range(0x1F3FB, 0x1F400)})


def grapheme_start(text: str, i: int) -> int:
    """``i`` moved back to the start of the character people see there, so a cut never
    splits a letter from its accents, a conjunct joined by a virama, an emoji sequence
    (joined with ZWJ, a skin tone, a variation selector), a flag's two regional indicators
    or a Hangul syllable's jamo."""
    n = len(text)
    while 0 < i < n:
        ch, before = text[i], text[i - 1]
        code, prev = ord(ch), ord(before)
        if (
            unicodedata.combining(ch)
            or unicodedata.category(ch) in ("Mn", "Mc", "Me")
            or code in _JOINING
            or 0xE0020 <= code <= 0xE007F
            or prev == 0x200D
            or unicodedata.combining(before) == 9  # after a virama: one conjunct
            or (0x1160 <= code <= 0x11FF and 0x1100 <= prev <= 0x11FF)  # jamo vowels, finals
        ):
            i -= 1
            continue
        if 0x1F1E6 <= code <= 0x1F1FF and 0x1F1E6 <= prev <= 0x1F1FF:
            # inside a run of regional indicators: pairs make flags, cut between pairs
            start = i
            while start > 0 and 0x1F1E6 <= ord(text[start - 1]) <= 0x1F1FF:
                start -= 1
            if (i - start) % 2:
                i -= 1
                continue
        break
    return i
