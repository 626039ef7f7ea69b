"""Secret redaction applied before memcli writes text or sends it to a provider.

Each secret is replaced by ``[REDACTED:<kind>]``. Patterns run in priority order (private key
blocks, then specific token formats, then URL credentials and generic ``key = value``
assignments, then the password of a ``.netrc`` entry or of a ``.pgpass`` line); a later
pattern never matches over text an earlier one already claimed, so ``token: ghp_...`` yields
a single ``github-token`` replacement. Markers already present in the
input are left alone, which makes ``redact`` idempotent.

Known limits: secrets in prose without a separator ("the password is hunter2") are not found,
and an assignment such as ``secret: keep quiet`` redacts its first word (``keep``) because a
value cannot be told from prose.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["Redaction", "contains_secret", "marker_re", "redact", "redact_lines"]


@functools.cache
def marker_re() -> re.Pattern[str]:
    """An existing replacement marker; never redacted again (compiled on first use)."""
    return re.compile(r"\[REDACTED:[a-z0-9-]+\]")


# Claimed spans are masked with NUL (same length, so offsets stay valid). Every pattern below
# excludes NUL from its character classes, so no match can reach into a claimed span.
_MASK = "\0"

# key = value / key: value, keeping the key and the separator (and any quotes).
_SEP = r"""(?:["']|\*\*)?[ \t]*(?::=|=>|[:=])(?:\*\*)?[ \t]*"""
_VALUE = (
    r'''(?:"(?P<dq>(?:[^"\\\n\0]|\\[^\n\0])+)"'''
    r"""|'(?P<sq>[^'\n\0]+)'"""
    r"""|`(?P<bq>[^`\n\0]+)`"""
    r"""|(?P<ph><[^<>\n\0]*>)"""  # <placeholder>, rejected by _is_value
    # A bare value runs to a blank, a quote, & , ; or a claimed span; one that ends at a
    # claimed span is no value (see _claims). Possessive: a shorter run is never a value.
    r"""|(?P<bare>[^\s"'`\0&,;=][^\s"'`\0&,;]*+))"""
)
_KEYWORD = (
    r"(?:passw(?:or)?d|passphrase|secret|token|api[_-]?key|apikey"
    r"|secret[_-]?key|private[_-]?key)"
)

# Values that are references or placeholders rather than secrets.
_NOT_A_VALUE = r"""\$\{?[A-Z_][A-Z0-9_]*\}?        # $ENV_VAR, ${ENV_VAR}
    |\$\{\{.*\}\}|\{\{.*\}\}            # ${{ secrets.X }}, {{ template }}
    |%[A-Za-z_][A-Za-z0-9_]*%           # %WINDOWS_VAR%
    |<[^<>]*>                           # <your-password>
    |(?i:null|none|nil|true|false|undefined)
    """


#: A field of a .pgpass line: no blank, ':' or escaped line break ("\\n").
_PG_FIELD = r"(?:[^\s:\0\\]|\\(?!n))++"


def _is_value(value: str) -> bool:
    """Whether an assigned value looks like a real secret value (not a placeholder)."""
    return any(c.isalnum() for c in value) and not _not_a_value().fullmatch(value)


def _looks_secret(value: str) -> bool:
    """Whether a lone word after "password" looks like a secret, not prose: it holds a
    digit, or a symbol other than punctuation at its ends (``p@ss``, ``S3cret``)."""
    core = value.strip(".,;:!?()[]{}\"'")
    if any(c.isdigit() for c in core):
        return True
    return any(c.isalnum() for c in core) and any(not c.isalnum() and c not in "_-" for c in core)


@functools.cache
def _not_a_value() -> re.Pattern[str]:
    return re.compile(_NOT_A_VALUE, re.VERBOSE)


# (kind, pattern, predicate on the redacted text or None). Where a pattern has a group named
# in _VALUE_GROUPS (``v``, or the quoted/bare value of an assignment) only that group is
# replaced; otherwise the whole match.
_Rule = tuple[str, str, "Callable[[str], bool] | None"]


@functools.cache
def _rules() -> tuple[_Rule, ...]:
    """The rules, as pattern sources: each is compiled the first time a text holds one of
    its trigger words (:func:`_compiled`); a search shows a few snippets and most of them
    hold none (see :data:`_RULE_TRIGGERS`)."""
    return (
        (
            "private-key",
            (
                r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
                # Lazy scan to END that never runs past the next BEGIN (keeps it linear).
                r"(?:(?:[^\0-]|-(?!----BEGIN))*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
                # Unterminated block: take the base64 and header lines that follow.
                r"|(?:(?:\r?\n|\\n)(?:[ \t]*[A-Za-z0-9+/=]+[ \t]*|[A-Za-z-]+:[^\n\0]*|[ \t]*))*)"
            ),
            None,
        ),
        (
            "aws-access-key",
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
            None,
        ),
        (
            "github-token",
            r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
            None,
        ),
        (
            "slack-token",
            (
                # The whole run, possessive; it holds a digit (the predicate): a lookahead
                # for the digit rescanned the run from every "xoxb-" in it.
                r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}+"
                r"|https://hooks\.slack\.com/services/[A-Za-z0-9_/]+"
            ),
            lambda value: value.startswith("https:") or any(d in value for d in _DIGITS),
        ),
        (
            "api-key",
            r"(?<![A-Za-z0-9])sk-(?=[a-z_-]{0,64}[A-Z0-9])[A-Za-z0-9_-]{20,}",
            None,
        ),
        (
            "stripe-key",
            r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}",
            None,
        ),
        (
            "google-api-key",
            r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])",
            None,
        ),
        (
            "gitlab-token",
            r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}",
            None,
        ),
        (
            "huggingface-token",
            r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])",
            None,
        ),
        (
            "npm-token",
            r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36,}(?![A-Za-z0-9])",
            None,
        ),
        (
            "azure-key",
            (r"(?<![A-Za-z0-9])(?i:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{20,}={0,2})"),
            None,
        ),
        (
            "jwt",
            (r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8,}"),
            None,
        ),
        (
            "url-credentials",
            # The user runs to the first ':' and may hold '@' (Azure's admin@server); the
            # password runs to the last '@' before the host (_before_host): it may hold '/'
            # and '#' (mysql://root:pa/ss#word@db); "host:8080/path@x" is a port and a path,
            # not a password. The run is taken whole (possessive) and cut in Python: a
            # pattern that backtracked to the '@' rescanned the run from every "://" in it.
            (
                r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*+://(?P<u>[^\s:/?#\0\"'<>]*+):"
                r"(?P<at>[^\s\0\"'<>]++)"
            ),
            lambda value: not re.match(r"\d+/", value),
        ),
        (
            "aws-secret",
            (
                r"(?<![A-Za-z0-9])(?i:(?:aws[_-]?)?secret[_-]?access[_-]?key|aws[_-]?secret[_-]?key)"
                r"(?:"
                + _SEP
                + _VALUE
                # or after blanks only, a shell's or a CLI's form: the 40 characters of a key
                + r"|[ \t]+(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=]))"
            ),
            _is_value,
        ),
        (
            "password",
            (
                r"(?<![A-Za-z0-9])(?i:(?:proxy-)?authorization)"
                r"(?:[\"']|\*\*)?[ \t]*[:=][ \t]*[\"']?"
                r"(?i:bearer|basic|token|bot|digest)[ \t]+(?P<v>[A-Za-z0-9._~+/=-]+)"
            ),
            None,
        ),
        (
            "password",
            # A bare bearer token in prose or a curl line, without its "Authorization:" header.
            (
                r"(?<![A-Za-z0-9])(?i:bearer)[ \t]+"
                r"(?P<v>(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{16,})"
            ),
            None,
        ),
        (
            "password",
            # ODBC and ADO connection strings (Pwd=...;) and keys with a PASS or PWD word
            # (DB_PASS, POSTGRES_PASS, pass:, MYSQL_PWD_ROOT: up to two words after it); a
            # path after "pwd:" is a shell's output, one after PASS_FILE= a file's name.
            r"(?<![A-Za-z0-9])(?i:pwd|pass)(?:[_.-][A-Za-z0-9]+){0,2}" + _SEP + _VALUE,
            lambda value: _is_value(value) and not value.startswith(("/", "~")),
        ),
        (
            "password",
            # Any key that ends with a keyword (DB_PASSWORD, x-api-key, clientSecret).
            "(?i:" + _KEYWORD + ")" + _SEP + _VALUE,
            _is_value,
        ),
        (
            "netrc-password",
            # ~/.netrc: "machine HOST login USER password SECRET" on a line of its own
            # (tokens in any order after "machine HOST" or "default login USER"), or inside a
            # line in full.
            (
                r"(?m)(?:(?:^|(?<=\\n))[ \t]*(?:machine[ \t]+[^\s\0]+|default(?=[ \t]+login))"
                r"(?:[ \t]+(?:login|account|port)[ \t]+[^\s\0]+)*"
                r"|(?<![A-Za-z0-9_])machine[ \t]+[^\s\0]+[ \t]+login[ \t]+[^\s\0]+)"
                r"[ \t]+passw(?:or)?d[ \t]+(?P<v>[^\s\0]+?)(?=\s|$|\\n)"
            ),
            None,
        ),
        (
            "netrc-password",
            # ~/.netrc spread over lines: "password SECRET" (after "login USER" or not) on a
            # line of its own, when SECRET looks like one ("password reset" is prose).
            (
                r"(?im)(?:^|(?<=\\n))[ \t]*(?:(?:login|account)[ \t]+[^\s\0]+[ \t]+)?"
                r"passw(?:or)?d[ \t]+(?P<v>[^\s\0]+?)[ \t]*(?=$|\\n|\r)"
            ),
            _looks_secret,
        ),
        (
            "pgpass-password",
            # ~/.pgpass: a line "hostname:port:database:username:password" (the port a number
            # or *); the password runs to the end of the line. A field stops at an escaped
            # line break ("\\n", where the next try starts): a field that ran over them was
            # scanned again from each of them.
            (
                r"(?m)(?:^|(?<=\\n))[ \t]*"
                + _PG_FIELD
                + r":(?:[0-9]{1,5}|\*):"
                + _PG_FIELD
                + ":"
                + _PG_FIELD
                + r":"
                r"(?P<v>[^\s\0]+?)[ \t]*(?=$|\\n|\r)"
            ),
            None,
        ),
    )


@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


_VALUE_GROUPS = ("v", "at", "dq", "sq", "bq", "ph", "bare")
_DIGITS = "0123456789"
_HOST_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789[")


def _before_host(run: str) -> int:
    """Length of a URL's password: ``run`` (what follows the user's ':') up to its last
    '@' that a host follows, or 0 when no '@' does."""
    at = len(run)
    while (at := run.rfind("@", 0, at)) >= 0:
        if at + 1 < len(run) and run[at + 1] in _HOST_START:
            return at
    return 0


class Redaction(NamedTuple):
    """Result of :func:`redact` (a NamedTuple: cheaper to define on a search's start-up)."""

    text: str  # redacted text
    kinds: tuple[str, ...]  # kind of each replacement, in order of occurrence


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """Span of the part of a match to replace: the value group if any, else everything;
    an empty span when the match holds no secret (a URL's run with no '@' host, a bare
    value that runs into a claimed span)."""
    groups = match.re.groupindex
    for name in _VALUE_GROUPS:
        if name in groups and match.group(name) is not None:
            start, end = match.span(name)
            if name == "at":
                cut = _before_host(match.group(name))
                # a user with '@' and a "password" with '/': an scp-like path (git@host:org/x@v1)
                if "@" in match.group("u") and "/" in match.group(name)[:cut]:
                    return start, start
                return start, start + cut
            if name == "bare" and match.string[end : end + 1] == _MASK:
                return start, start
            return start, end
    return match.span()


#: The words each rule of :func:`_rules` needs, in lower case and in the same order: a rule
#: runs only on text holding one of its words (the .pgpass rule, with no words: on text
#: holding four colons), and text holding none of them all is returned
#: as it is, the common case (a few substring tests, nothing compiled). Masking a claimed span
#: only removes text, so a rule left out at the start could not match later either.
_RULE_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("-----begin",),
    ("akia", "asia"),
    (*(f"gh{c}_" for c in "pousr"), "github_pat_"),
    (*(f"xox{c}-" for c in "abprs"), "hooks.slack.com"),
    ("sk-",),
    tuple(f"{a}_{b}_" for a in ("sk", "rk") for b in ("live", "test")),
    ("aiza",),
    ("glpat-",),
    ("hf_",),
    ("npm_",),
    ("accountkey", "sharedaccesskey"),
    ("eyj",),
    ("://",),
    ("secret",),
    ("authorization",),
    ("bearer",),
    ("pwd", *(f"pass{c}" for c in "_.-\"'* \t:=")),  # what can follow PASS in the rule
    ("passw", "secret", "token", "apikey", "api_key", "api-key", "private_key", "private-key"),
    ("passw",),
    ("passw",),
    (),  # a .pgpass line: four colons (see _claims)
)
#: The first look of every call, one word per family ("pass" for "passw", "pass="...): a text
#: that holds none of these holds no rule's word.
_TRIGGERS = tuple(
    dict.fromkeys(
        "pass" if word.startswith("pass") else word for words in _RULE_TRIGGERS for word in words
    )
)


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<kind>]``."""
    return _replace(text, _claims(text), keep_lines=False)


def redact_lines(text: str) -> Redaction:
    """:func:`redact` keeping the lines: a secret over several lines (a private key block)
    becomes one marker on each of them, so line numbers still hold (``get``, snippets)."""
    return _replace(text, _claims(text), keep_lines=True)


def _claims(text: str) -> list[tuple[int, int, str | None]]:
    """The spans of ``text`` to replace, with their kind (None: a marker already there)."""
    low = text.lower()
    colons = low.count(":") >= 4  # what a .pgpass line needs, the rule with no words
    if not colons and not any(word in low for word in _TRIGGERS):
        return []
    rules = [
        rule
        for rule, words in zip(_rules(), _RULE_TRIGGERS, strict=True)
        if (any(word in low for word in words) if words else colons)
    ]
    masked = list(text)
    # Existing markers are claimed first (kind None) so they are never redacted again.
    claims: list[tuple[int, int, str | None]] = []
    for m in marker_re().finditer(text):
        claims.append((m.start(), m.end(), None))
        masked[m.start() : m.end()] = _MASK * (m.end() - m.start())
    current = "".join(masked)
    # Sweep until nothing new is claimed: masking a span can change the context another
    # pattern sees (e.g. a word boundary), and the fixpoint is what makes redact idempotent.
    changed = True
    while changed:
        changed = False
        for kind, source, accept in rules:
            pattern = _compiled(source)
            found: list[tuple[int, int]] = []
            for m in pattern.finditer(current):
                start, end = _value_span(m)
                if start == end or _MASK in current[start:end]:
                    continue
                if accept is not None and not accept(current[start:end]):
                    continue
                found.append((start, end))
            if not found:
                continue
            changed = True
            for start, end in found:
                claims.append((start, end, kind))
                masked[start:end] = _MASK * (end - start)
            current = "".join(masked)
    return claims


def _replace(
    text: str, claims: list[tuple[int, int, str | None]], *, keep_lines: bool
) -> Redaction:
    if not any(kind for _, _, kind in claims):
        return Redaction(text, ())
    claims.sort(key=lambda claim: claim[0])
    out: list[str] = []
    kinds: list[str] = []
    pos = 0
    for start, end, claim in claims:
        out.append(text[pos:start])
        if claim is None:
            out.append(text[start:end])
        else:
            marker = f"[REDACTED:{claim}]"
            lines = text.count("\n", start, end) if keep_lines else 0
            out.append("\n".join([marker] * (lines + 1)))
            kinds.append(claim)
        pos = end
    out.append(text[pos:])
    return Redaction("".join(out), tuple(kinds))


def contains_secret(text: str) -> bool:
    """Whether :func:`redact` would replace anything in ``text``."""
    return bool(redact(text).kinds)
