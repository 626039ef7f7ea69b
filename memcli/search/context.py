"""``search --format context``: one Markdown block for a prompt, within a token budget.

The block lists results in rank order, each under its ``path:start-end`` citation::

    ## Memory for "which cache do we use"

    `memory/2026-11-22.md:12-13`
    - 14:32 [decision] Use Valkey instead of Redis for the cache. #infra
    - 14:35 [fact] Valkey listens on port 6380.

Tokens are estimated as ``ceil(characters / 4)``, the usual rule of thumb for English text
and GPT-style tokenizers (cheap, no tokenizer to load). The estimate of the whole block,
final newline included, never exceeds the budget. A result that does not fit whole is
reduced to its matching passage (its context dropped); if even that does not fit it is left
out, and later, shorter results may still be included. Lines are never cut in half.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ``ceil(len / 4)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class ContextBlock:
    text: str  # ends with a newline, or is empty when nothing fits
    included: int = 0  # results in the block (whole, or reduced to their matching passage)
    left_out: int = 0
    citations: list[str] = field(default_factory=list)


def _core(hit: Any) -> tuple[int, int, str] | None:
    """The matching passage of a hit (without its context lines), if narrower."""
    p = getattr(hit, "passage", None)
    if p is None or (p.start, p.end) == (hit.start_line, hit.end_line):
        return None
    lines = hit.snippet.split("\n")
    lo, hi = p.start - hit.start_line, p.end - hit.start_line
    if lo < 0 or hi >= len(lines):
        return None
    return p.start, p.end, "\n".join(lines[lo : hi + 1])


def _section(path: str, start: int, end: int, text: str) -> str:
    return f"`{path}:{start}-{end}`\n{text.rstrip()}\n"


def render(query: str, hits: list[Any], max_tokens: int) -> ContextBlock:
    """The context block of ``hits`` (in their order) within ``max_tokens``."""
    budget = max(max_tokens, 0) * CHARS_PER_TOKEN  # characters
    header = f'## Memory for "{" ".join(query.split())}"\n'
    block = ContextBlock("")
    parts: list[str] = []
    used = 0
    for hit in hits:
        options = [(hit.start_line, hit.end_line, hit.snippet)]
        core = _core(hit)
        if core is not None:
            options.append(core)
        for start, end, text in options:
            section = _section(hit.path, start, end, text)
            add = len(section) + 1 + (len(header) if not parts else 0)  # +1: blank line before
            if used + add <= budget:
                parts.append(section)
                used += add
                block.included += 1
                block.citations.append(f"{hit.path}:{start}-{end}")
                break
        else:
            block.left_out += 1
    if parts:
        block.text = header + "".join("\n" + s for s in parts)
    return block
