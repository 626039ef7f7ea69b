"""Replace one marked section of ``benchmarks/RESULTS.md``, leaving the rest alone."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(name: str, markdown: str, path: Path = RESULTS) -> None:
    """Put ``markdown`` between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` (appended
    at the end of the file the first time)."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = path.read_text(encoding="utf-8")
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{begin}\n{markdown}{end}{tail}"
    else:
        text = text.rstrip("\n") + f"\n\n{begin}\n{markdown}{end}\n"
    path.write_text(text, encoding="utf-8")
