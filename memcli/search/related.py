"""Words of software work that name the same thing: what recall adds to a prompt's keyword
query, and how it tells that an entry names what a prompt names in other words.

An agent asks "how do I ship this to prod?" and the fact says "Deploy with make deploy";
it asks "which type checker do we use?" and the fact names mypy. A small embedding model
and a keyword search both miss such pairs. ``related.txt`` holds groups of words and phrases
people use for one thing, and well-known tools named for what they are (``deploy: ship,
release, roll out``; ``type checker: mypy, pyright``), written for no project in particular.
Recall adds to a prompt's keyword query the words of the groups it names (its vector stays
the prompt's own), and gives an entry that names a group the prompt names with a smaller
margin (:func:`memcli.service.agent.recall`).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from memcli.notes.entryparse import entry_words
from memcli.notes.redact import marker_re
from memcli.search.query import STOPWORDS

#: One group a line: ``label: term, term``.
RELATED = Path(__file__).with_name("related.txt")

#: The most words added to a query: each is one more term its keyword search scores (a long
#: paste naming many things would add hundreds; no prompt of benchmarks/recall_bench.py
#: needs more than 46).
MAX_WORDS = 48

_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ies", "ing", "es", "ed", "s")


def _stem(word: str) -> str:
    """``word`` without a plural or verb ending and a final "e" (enough to match "deploys"
    with "deploy", "releases" and "released" with "release")."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


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
            if stems and not set(_WORD.findall(term)) <= STOPWORDS:  # "who did what"
                index.setdefault(stems, []).append(n)
    return {k: tuple(v) for k, v in index.items()}


@cache
def _longest() -> int:
    """The most words a term has."""
    return max((len(k) for k in _index()), default=0)


def named(text: str) -> frozenset[int]:
    """The groups ``text`` names: one of their terms or their label, as whole words (plurals
    and verb endings aside), the longest term that starts at a word first ("logged out" is
    not "logged")."""
    return frozenset(_mentions(text))


def _mentions(text: str) -> list[int]:
    """The groups ``text`` names (:func:`named`), in the order it first names them."""
    stems = _stems(text)
    index = _index()
    longest = _longest()
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


def entry_named(passage: str) -> frozenset[int]:
    """The groups an entry names in its own words: not its kind, time or tags, nor a
    redaction marker (``[REDACTED:aws-access-key]`` names no key)."""
    return named(marker_re().sub(" ", entry_words(passage)))


def expanded(text: str) -> str:
    """``text`` and its :func:`related_words`, a phrase of several words quoted (a keyword
    query's phrase, :mod:`memcli.search.query`). A quote ``text`` leaves open is dropped:
    it would pair with the first phrase added and make a phrase of the prompt's words."""
    words = [f'"{w}"' if " " in w else w for w in related_words(text)]
    if not words:
        return text
    if text.count('"') % 2:
        cut = text.rfind('"')
        text = text[:cut] + " " + text[cut + 1 :]
    return " ".join([text, *words])
