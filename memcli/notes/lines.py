"""A text's lines as editors, ``git`` and ``memcli get`` number them."""

from __future__ import annotations


def split_lines(text: str) -> list[str]:
    """Lines split at ``\\n`` only, a ``\\r`` before it dropped: a form feed, a vertical tab or
    a Unicode line separator inside a line does not start a new one (``str.splitlines`` would
    number the lines after it differently from the chunker and from ``get``)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
