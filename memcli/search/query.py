"""Turning a user's query into an FTS5 expression.

Words are OR-ed (a natural-language question must find facts), stop words are
dropped, quoted phrases stay phrases, and identifiers such as ``CX-7742-B``
become exact token sequences. Stemming is done by FTS5's porter tokenizer on
both sides. A word ending in ``*`` is a prefix (``valk*``). Text in scripts written
without spaces (Chinese, Japanese, Korean, Thai...) becomes the pieces the index keeps
for it (:mod:`memcli.index.bigrams`): any part of such a text is found.
"""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
import re
from typing import NamedTuple

from memcli.errors import BadInput
from memcli.index.bigrams import has_unsegmented, query_pieces, unsegmented_phrase

#: The bm25 column weights of a keyword query: text, heading, grams (the candidates' query,
#: and the score bounds the engine learns for it, :mod:`memcli.search.bounds`).
KEYWORD_WEIGHTS = (1.0, 0.3, 1.0)
#: Words that frame a question more than they say what it is about ("what kind of", "how
#: many", "did she mention"), dropped like stop words (benchmarks/RESULTS.md: LoCoMo dev).
QUESTION_WORDS = frozenset("kind sort thing things likely many much mention mentioned".split())
STOPWORDS = (
    frozenset(
        """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i
    i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
    myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's which while who who's whom why why's will with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves also did does
    s t d ll m re ve y just ever
    """.split()
    )
    | QUESTION_WORDS
)

_PHRASE = re.compile(r'"([^"]*)"')
_TOKEN = re.compile(r"[\w][\w'\-./:@+#]*\*?")
_PART = re.compile(r"[^\W_]+")
_PREFIX = re.compile(r"[^\W_]+\*\Z")


class ParsedQuery(NamedTuple):
    """Terms (single tokens) and phrases (token sequences) of a query."""

    text: str
    terms: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]
    prefixes: tuple[str, ...] = ()  # ``valk*``: valk
    names: tuple[str, ...] = ()  # terms written capitalised after the first word (Caroline)

    def fts(self) -> str:
        """The FTS5 MATCH expression: every term, phrase and prefix OR-ed."""
        parts = [f'"{t}"' for t in self.terms]
        parts += ['"' + " ".join(p) + '"' for p in self.phrases]
        parts += [f'"{p}"*' for p in self.prefixes]
        return " OR ".join(parts)

    @property
    def words(self) -> tuple[str, ...]:
        """Every token of the query (terms and phrase members), for snippet scoring."""
        return self.terms + tuple(w for p in self.phrases for w in p)


def parse_query(text: str) -> ParsedQuery:
    """Parse a query; raise BadInput when it has no searchable token."""
    if not text or not text.strip():
        raise BadInput("empty query", hint="give words to search for")
    phrases: list[tuple[str, ...]] = []
    for m in _PHRASE.finditer(text):
        parts = tuple(p.lower() for p in _PART.findall(m.group(1)))
        if parts:
            phrases.append(unsegmented_phrase(parts))
    rest = _PHRASE.sub(" ", text)
    terms: list[str] = []
    stop_terms: list[str] = []
    prefixes: list[str] = []
    names: list[str] = []
    for n, tok in enumerate(_TOKEN.findall(rest)):
        if _PREFIX.match(tok):
            prefixes.append(tok[:-1].lower())
            continue
        tok = tok.rstrip("*")
        if has_unsegmented(tok):
            pieces, others = query_pieces(tok)
            terms.extend(p.lower() for p in pieces)
            for other in others:
                terms.extend(p.lower() for p in _PART.findall(other))
            continue
        parts = tuple(p.lower() for p in _PART.findall(tok))
        if not parts:
            continue
        if len(parts) > 1 and not _is_contraction(tok):
            phrases.append(parts)
            continue
        word = parts[0]
        if tok.lower() in STOPWORDS or word in STOPWORDS:
            stop_terms.append(word)
            continue
        terms.append(word)
        if n and tok[0].isupper():
            names.append(word)
    if not terms and not phrases and not prefixes:
        terms = stop_terms  # a query of only stop words still searches them
    if not terms and not phrases and not prefixes:
        raise BadInput(f"query {text!r} has no searchable words")
    return ParsedQuery(
        text,
        tuple(dict.fromkeys(terms)),
        tuple(dict.fromkeys(phrases)),
        tuple(dict.fromkeys(prefixes)),
        tuple(dict.fromkeys(names)),
    )


def _is_contraction(tok: str) -> bool:
    """``Caroline's`` / ``don't`` are words, not identifiers."""
    return "'" in tok and not any(ch in tok for ch in "-./:@+#")
