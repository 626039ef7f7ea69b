"""Control characters in memory text: terminal escapes, bidi overrides and the like.

A fact comes from a person, a script or a model's reading of a conversation; none of them should
be able to write bytes that act when the Markdown is shown: ANSI escape sequences (colours,
cursor moves, OSC 8 links, OSC 52 clipboard writes), other C0 and C1 controls, and the Unicode
bidirectional overrides that make text read differently from what it holds (Trojan Source).
They are removed before anything is written; tabs and newlines stay.
"""

from __future__ import annotations

import re

_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI (7- and 8-bit): colours, cursor moves, erase
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|$)"  # OSC: titles, links, clipboard (52)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\|$)"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"  # two-character escapes (and a lone ESC)
)
_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    "\u202a-\u202e\u2066-\u2069"  # bidi embeddings, overrides and isolates
    "\u200e\u200f\u061c]"  # directional marks
)


def strip_controls(text: str) -> str:
    """``text`` without escape sequences, control characters and bidi overrides."""
    if text.isprintable():  # the common case, in C: nothing to do
        return text
    return _CONTROLS.sub("", _SEQUENCES.sub("", text.replace("\r\n", "\n")))
