"""Words of software work that name the same thing: what recall adds to a prompt before it
searches.

An agent asks "how do I ship this to prod?" and the fact says "Deploy with make deploy";
it asks "which type checker do we use?" and the fact names mypy. A small embedding model
and a keyword search both miss such pairs. ``related.txt`` holds groups of words and phrases
people use for one thing, and well-known tools named for what they are (``deploy: ship,
release, roll out``; ``type checker: mypy, pyright``), written for no project in particular.
Recall adds to a prompt the words of every group it names: the keyword search then finds the
fact's own words, and the prompt's vector moves towards them.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

#: One group a line: ``label: term, term``.
RELATED = Path(__file__).with_name("related.txt")

#: The most words added to a query: each is one more term its keyword search scores (a long
#: paste naming many things would add hundreds; no prompt of benchmarks/recall_bench.py
#: needs more than 46).
MAX_WORDS = 48

_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ies", "ing", "es", "ed", "s")


def _stem(word: str) -> str:
    """``word`` without a plural or verb ending (enough to match "deploys" with "deploy")."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _stems(text: str) -> tuple[str, ...]:
    return tuple(_stem(w) for w in _WORD.findall(text.lower()))


@cache
def groups() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The groups (read once a process): each its label and its terms."""
    out = []
    for line in RELATED.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or ":" not in line:
            continue
        label, _, rest = line.partition(":")
        terms = tuple(t.strip() for t in rest.split(",") if t.strip())
        out.append((label.strip(), terms))
    return tuple(out)


@cache
def _index() -> dict[tuple[str, ...], tuple[int, ...]]:
    """Each term's stems -> the groups that hold it."""
    index: dict[tuple[str, ...], list[int]] = {}
    for n, (label, terms) in enumerate(groups()):
        for term in (label, *terms):
            stems = _stems(term)
            if stems:
                index.setdefault(stems, []).append(n)
    return {k: tuple(v) for k, v in index.items()}


def named(text: str) -> frozenset[int]:
    """The groups ``text`` names: one of their terms or their label, as whole words (plurals
    and verb endings aside), the longest term that starts at a word first ("logged out" is
    not "logged")."""
    return frozenset(_mentions(text))


def _mentions(text: str) -> list[int]:
    """The groups ``text`` names (:func:`named`), in the order it first names them."""
    stems = _stems(text)
    index = _index()
    longest = max((len(k) for k in index), default=0)
    found: dict[int, None] = {}
    i = 0
    while i < len(stems):
        for n in range(min(longest, len(stems) - i), 0, -1):
            if stems[i : i + n] in index:
                found.update(dict.fromkeys(index[stems[i : i + n]]))
                i += n
                break
        else:
            i += 1
    return list(found)


def related_words(text: str) -> list[str]:
    """The terms of the groups ``text`` names that it does not hold itself, the groups it
    names first first, at most :data:`MAX_WORDS`."""
    own = set(_stems(text))
    words: dict[str, None] = {}
    for g in _mentions(text):
        label, terms = groups()[g]
        for term in (label, *terms):
            if not set(_stems(term)) <= own:
                words.setdefault(term, None)
    return list(words)[:MAX_WORDS]


def expanded(text: str) -> str:
    """``text`` and its :func:`related_words`, a phrase of several words quoted (a keyword
    query's phrase, :mod:`memcli.search.query`)."""
    words = [f'"{w}"' if " " in w else w for w in related_words(text)]
    return " ".join([text, *words])
