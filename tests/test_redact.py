"""Tests for memcli.notes.redact: every kind, near misses, idempotence and properties."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.notes.redact import Redaction, contains_secret, redact, redact_lines

GH36 = "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"  # 36 characters
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = [
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MaGZPl9GxmZTFbmJ",
    "q2YmHY2tP1xW1mYUCwKbpXq5n4Rp8wJfQm0uGZ6E3XZ+3Wk2uF0Q==",
]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n-----END RSA PRIVATE KEY-----"


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# --- true positives, one or more per kind -------------------------------------------------

POSITIVES: list[tuple[str, str, tuple[str, ...]]] = [
    # aws-access-key
    ("key AKIAIOSFODNN7EXAMPLE here", f"key {marker('aws-access-key')} here", ("aws-access-key",)),
    ("ASIAY34FZKBOKMUTVV7A", marker("aws-access-key"), ("aws-access-key",)),
    # aws-secret: key name and separator kept
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        f"aws_secret_access_key = {marker('aws-secret')}",
        ("aws-secret",),
    ),
    (
        'AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        f'AWS_SECRET_ACCESS_KEY="{marker("aws-secret")}"',
        ("aws-secret",),
    ),
    # api-key (OpenAI / Anthropic style)
    ("sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL", marker("api-key"), ("api-key",)),
    (
        "OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl_mn-op",
        f"OPENAI_API_KEY={marker('api-key')}",
        ("api-key",),
    ),
    (
        "use sk-ant-api03-AbCdEfGh1234567890_xyzXYZ-abc now",
        f"use {marker('api-key')} now",
        ("api-key",),
    ),
    # github-token
    (f"ghp_{GH36}", marker("github-token"), ("github-token",)),
    (
        f"gho_{GH36} ghs_{GH36}",
        f"{marker('github-token')} {marker('github-token')}",
        ("github-token", "github-token"),
    ),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        marker("github-token"),
        ("github-token",),
    ),
    # slack-token
    (
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        marker("slack-token"),
        ("slack-token",),
    ),
    ("xoxp-2233445566-7788990011-aBcDeF", marker("slack-token"), ("slack-token",)),
    # private-key
    (f"before\n{PEM}\nafter", f"before\n{marker('private-key')}\nafter", ("private-key",)),
    # jwt
    (f"Cookie: session={JWT};", f"Cookie: session={marker('jwt')};", ("jwt",)),
    # password-style assignments
    ("password=hunter2", f"password={marker('password')}", ("password",)),
    ("passwd: s3cret!", f"passwd: {marker('password')}", ("password",)),
    ('secret = "two words"', f'secret = "{marker("password")}"', ("password",)),
    ("token: abc123def", f"token: {marker('password')}", ("password",)),
    ("api_key='k-123'", f"api_key='{marker('password')}'", ("password",)),
    ("apikey=abcd1234", f"apikey={marker('password')}", ("password",)),
    ("the password: `hunter2`", f"the password: `{marker('password')}`", ("password",)),
    ("access_token=xyz789&next=1", f"access_token={marker('password')}&next=1", ("password",)),
    ('"client_secret": "a1b2c3"', f'"client_secret": "{marker("password")}"', ("password",)),
    ("DB_PASSWORD=hunter2", f"DB_PASSWORD={marker('password')}", ("password",)),
    ("**Password:** hunter2", f"**Password:** {marker('password')}", ("password",)),
    (
        "Authorization: Bearer abc.def-123",
        f"Authorization: Bearer {marker('password')}",
        ("password",),
    ),
    # url-credentials: scheme, user and host kept
    (
        "https://user:pass@example.com/x",
        f"https://user:{marker('url-credentials')}@example.com/x",
        ("url-credentials",),
    ),
    (
        "redis://:hunter2@localhost:6379/0",
        f"redis://:{marker('url-credentials')}@localhost:6379/0",
        ("url-credentials",),
    ),
    (
        "postgres://app:p@ss:w0rd@db.internal:5432/app",
        f"postgres://app:{marker('url-credentials')}@db.internal:5432/app",
        ("url-credentials",),
    ),
]


@pytest.mark.parametrize(("text", "expected", "kinds"), POSITIVES)
def test_true_positives(text: str, expected: str, kinds: tuple[str, ...]) -> None:
    result = redact(text)
    assert result == Redaction(expected, kinds)
    assert contains_secret(text)
    assert not contains_secret(result.text)


# Formats added after an adversarial pass: each one leaked before.
POSITIVES += [
    (
        "mysql://root:pa/ss#word@db.internal/app",
        f"mysql://root:{marker('url-credentials')}@db.internal/app",
        ("url-credentials",),
    ),
    (
        "curl -H 'X: 1' with Bearer eyJ0eXAi0123456789abcdef now",
        f"curl -H 'X: 1' with Bearer {marker('password')} now",
        ("password",),
    ),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", marker("stripe-key"), ("stripe-key",)),
    ("rk_test_51H8x2aLk0abcdEFGH", marker("stripe-key"), ("stripe-key",)),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", marker("google-api-key"), ("google-api-key",)),
    ("glpat-xYz12345678901234567", marker("gitlab-token"), ("gitlab-token",)),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", marker("huggingface-token"), ("huggingface-token",)),
    ("npm_" + "a1B2" * 9, marker("npm-token"), ("npm-token",)),
    (
        "AccountName=acme;AccountKey=abcdEFGH1234567890abcd+/==;EndpointSuffix=core",
        f"AccountName=acme;AccountKey={marker('azure-key')};EndpointSuffix=core",
        ("azure-key",),
    ),
    (
        "Driver={ODBC};Server=db;Uid=sa;Pwd=Hunter2xyz;",
        f"Driver={{ODBC}};Server=db;Uid=sa;Pwd={marker('password')};",
        ("password",),
    ),
]


@pytest.mark.parametrize(("text", "expected", "kinds"), POSITIVES[-10:])
def test_formats_that_used_to_leak(text: str, expected: str, kinds: tuple[str, ...]) -> None:
    result = redact(text)
    assert result == Redaction(expected, kinds)
    assert contains_secret(text) and not contains_secret(result.text)


NEAR_MISSES = [
    "reset the password tomorrow",
    "the password policy requires a token and a secret",
    "passwords: 3",  # key must end with the keyword
    "token_count: 5",
    "max_tokens=4096",
    "password: ${DB_PASSWORD}",  # a reference, not a value
    "PASSWORD=$DB_PASSWORD",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "password: <your password here>",
    "password: ********",
    'password: ""',
    "secret: null",
    "AKIA1234",  # too short
    "XAKIAIOSFODNN7EXAMPLEX",  # inside a longer word
    "akiaiosfodnn7example",  # lowercase
    "ghp_short",
    "gh_" + GH36,
    "sk-learn-compatible-estimators-are-nice",  # lowercase words, not a key
    "sk-123",
    "task-1234567890ABCDEFGHIJKLMN",  # 'sk-' inside a word
    "xoxb-style tokens",
    "eyJhbGciOiJIUzI1NiJ9 alone",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqh\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIBIjANBgkqh\n-----END CERTIFICATE-----",
    "https://example.com:8443/path?q=1",
    "http://user@example.com/",
    "git@github.com:org/repo.git",
    "ssh://git@github.com:22/org/repo",
    "Meeting at 14:32: decided to use Valkey.",
    "Authorization header must be set",
    "The bearer of bad news arrived at 14:32 with the bearer bonds",
    "see https://host:8080/path@foo for details",  # a port and a path, not a password
    "pwd: /home/alice/project",  # a shell's working folder
    "sk_live_short",
    "hf_token is the name of the variable",
    "npm_config_prefix=/usr/local",
    "glpat-short",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_untouched(text: str) -> None:
    assert redact(text) == Redaction(text, ())
    assert not contains_secret(text)


def test_specific_format_wins_over_generic_assignment() -> None:
    assert redact(f"token: ghp_{GH36}") == Redaction(
        f"token: {marker('github-token')}", ("github-token",)
    )
    assert redact('"api_key": "sk-abcdefghijklmnopqrstuvwxyz0123"').kinds == ("api-key",)
    assert redact(f"GITHUB_TOKEN=ghp_{GH36}").kinds == ("github-token",)
    assert redact(f"url = https://u:ghp_{GH36}@github.com").kinds == ("github-token",)
    assert redact("password=https://u:secret1@h.example").text == (
        f"password=https://u:{marker('url-credentials')}@h.example"
    )


def test_private_key_block_is_one_replacement() -> None:
    text = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "token: abc123\n"
        "-----END OPENSSH PRIVATE KEY-----\n"
        "then password=x1"
    )
    result = redact(text)
    assert result.text == f"{marker('private-key')}\nthen password={marker('password')}"
    assert result.kinds == ("private-key", "password")


@pytest.mark.parametrize(
    "header",
    ["PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"],
)
def test_private_key_header_variants(header: str) -> None:
    text = f"-----BEGIN {header}-----\nAAAA\nBBBB==\n-----END {header}-----"
    assert redact(text) == Redaction(marker("private-key"), ("private-key",))


def test_private_key_with_escaped_newlines_and_unterminated() -> None:
    one_line = '{"key": "-----BEGIN PRIVATE KEY-----\\nMIIEv\\n-----END PRIVATE KEY-----\\n"}'
    assert redact(one_line).text == '{"key": "' + marker("private-key") + '\\n"}'
    cut = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n"
    out = redact(cut).text
    assert all(line not in out for line in PEM_BODY)


def test_kinds_in_order_of_occurrence() -> None:
    text = f"a=1 password=x9 then AKIAIOSFODNN7EXAMPLE then {JWT} then https://u:p@h.io"
    assert redact(text).kinds == ("password", "aws-access-key", "jwt", "url-credentials")


def test_markers_are_never_redacted_again() -> None:
    for text in [
        f"token: {marker('github-token')}",
        f"password={marker('password')}",
        f'secret: "{marker("password")}"',
        f"https://user:{marker('url-credentials')}@host",
        marker("private-key"),
    ]:
        assert redact(text) == Redaction(text, ())


@pytest.mark.parametrize("text", [p[0] for p in POSITIVES] + NEAR_MISSES)
def test_idempotent_examples(text: str) -> None:
    once = redact(text).text
    assert redact(once).text == once
    assert redact(once).kinds == ()


def test_surrounding_text_is_kept_exactly() -> None:
    text = "line one\n  password = hunter2  # comment\n\tlast line\n"
    assert (
        redact(text).text
        == f"line one\n  password = {marker('password')}  # comment\n\tlast line\n"
    )


def test_empty_text() -> None:
    assert redact("") == Redaction("", ())
    assert not contains_secret("")


# --- properties ----------------------------------------------------------------------------

VOCAB = [
    "the",
    "a",
    "we",
    "decided",
    "to",
    "use",
    "valkey",
    "cache",
    "reset",
    "password",
    "tomorrow",
    "token",
    "secret",
    "api",
    "key",
    "sk",
    "AKIA",
    "ASIA",
    "eyJ",
    "ghp",
    "xoxb",
    "github",
    "BEGIN",
    "PRIVATE",
    "KEY",
    "https",
    "user",
    "host",
    "Bearer",
    "Authorization",
    "api_key",
    "passwd",
    "JWT",
    "deploy",
    "on",
    "Friday",
    "never",
    "ship",
]
SEPARATORS = [" ", " ", " ", ", ", ". ", "! ", "? ", " (", ") ", "\n", "\n\n", " / ", " @ "]

words = st.lists(st.sampled_from(VOCAB), max_size=30)
safe_text = st.builds(
    lambda ws, seps: "".join(w + seps[i % len(seps)] for i, w in enumerate(ws)).strip(),
    words,
    st.lists(st.sampled_from(SEPARATORS), min_size=1, max_size=8),
)


@pytest.mark.slow
@given(safe_text)
def test_safe_text_is_unchanged(text: str) -> None:
    assert redact(text) == Redaction(text, ())


UPPER_ALNUM = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"


def _text(alphabet: str, lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=lo, max_size=hi)


# Each strategy yields (text to insert, the raw secret that must not survive).
def _whole(s: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str]]:
    return s.map(lambda x: (x, x))


aws_key = _whole(
    st.tuples(st.sampled_from(["AKIA", "ASIA"]), _text(UPPER_ALNUM, 16, 16)).map("".join)
)
aws_secret = st.tuples(
    st.sampled_from(["aws_secret_access_key = ", "AWS_SECRET_ACCESS_KEY=", "aws_secret_key: "]),
    _text(B64, 39, 39).map(lambda v: v + "7"),
).map(lambda t: (t[0] + t[1], t[1]))
api_key = _whole(
    st.tuples(
        st.sampled_from(["sk-", "sk-proj-", "sk-ant-api03-"]),
        _text(B64URL, 20, 60).map(lambda v: v + "Z9"),
    ).map("".join)
)
github = _whole(
    st.one_of(
        st.tuples(st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), _text(ALNUM, 36, 36)),
        st.tuples(st.just("github_pat_"), _text(ALNUM + "_", 22, 82)),
    ).map("".join)
)
slack = _whole(
    st.tuples(
        st.sampled_from(["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"]),
        _text(string.digits, 10, 13),
        st.just("-"),
        _text(ALNUM, 8, 32),
    ).map("".join)
)
private_key = st.tuples(
    st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "DSA ", "ENCRYPTED "]),
    st.lists(_text(B64, 8, 64).map(lambda v: v + "Q"), min_size=1, max_size=5),
).map(
    lambda t: (
        f"-----BEGIN {t[0]}PRIVATE KEY-----\n"
        + "\n".join(t[1])
        + f"\n-----END {t[0]}PRIVATE KEY-----",
        "\n".join(t[1]),
    )
)
jwt = _whole(
    st.tuples(_text(B64URL, 10, 40), _text(B64URL, 10, 80), _text(B64URL, 20, 60)).map(
        lambda t: f"eyJ{t[0]}.eyJ{t[1]}.{t[2]}"
    )
)
VALUE_CHARS = ALNUM + "!#*+-./@^_~"
password = st.one_of(
    st.tuples(
        st.sampled_from(
            [
                "password",
                "passwd",
                "secret",
                "token",
                "api_key",
                "apikey",
                "access_token",
                "client_secret",
                "DB_PASSWORD",
                "Password",
            ]
        ),
        st.sampled_from(["=", ": ", " = ", ":"]),
        _text(VALUE_CHARS, 0, 30).map(lambda v: "7" + v),
    ).map(lambda t: (t[0] + t[1] + t[2], t[2])),
    st.tuples(
        st.sampled_from(["password", "secret", "token"]),
        st.sampled_from(['"', "'"]),
        _text(VALUE_CHARS + " ", 0, 30).map(lambda v: "7" + v),
    ).map(lambda t: (f"{t[0]}: {t[1]}{t[2]}{t[1]}", t[2])),
)
url_credentials = st.tuples(
    st.sampled_from(["https", "http", "postgres", "redis", "ftp", "git+ssh"]),
    _text(string.ascii_lowercase, 0, 8),
    _text(ALNUM + "!$*+-._~%", 0, 20).map(lambda v: "9" + v),
).map(lambda t: (f"{t[0]}://{t[1]}:{t[2]}@db.example.com/x", t[2]))

stripe = _whole(
    st.tuples(st.sampled_from(["sk_live_", "sk_test_", "rk_live_"]), _text(ALNUM, 10, 40)).map(
        "".join
    )
)
google = _whole(_text(B64URL, 35, 35).map(lambda v: "AIza" + v))
gitlab = _whole(_text(B64URL, 20, 30).map(lambda v: "glpat-" + v))
huggingface = _whole(_text(ALNUM, 30, 40).map(lambda v: "hf_" + v))
npm = _whole(_text(ALNUM, 36, 36).map(lambda v: "npm_" + v))
azure = st.tuples(st.sampled_from(["AccountKey=", "SharedAccessKey="]), _text(B64, 20, 88)).map(
    lambda t: (f"Endpoint=x;{t[0]}{t[1]}==;Other=1", t[1])
)
bearer = _text(ALNUM + "._~+/-", 15, 60).map(lambda v: (f"Bearer 7{v}", "7" + v))
db_url = st.tuples(
    st.sampled_from(["mysql", "postgres", "mongodb+srv"]),
    _text(ALNUM + "/#!*", 0, 20).map(lambda v: "7Q" + v),
).map(lambda t: (f"{t[0]}://root:{t[1]}@db.example.com/app", t[1]))

SECRET_KINDS = {
    "aws-access-key": aws_key,
    "aws-secret": aws_secret,
    "api-key": api_key,
    "github-token": github,
    "slack-token": slack,
    "private-key": private_key,
    "jwt": jwt,
    "url-credentials": st.one_of(url_credentials, db_url),
    "stripe-key": stripe,
    "google-api-key": google,
    "gitlab-token": gitlab,
    "huggingface-token": huggingface,
    "npm-token": npm,
    "azure-key": azure,
    "password": st.one_of(password, bearer),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(SECRET_KINDS))
@settings(max_examples=60)
@given(data=st.data())
def test_inserted_secret_is_removed(kind: str, data: st.DataObject) -> None:
    inserted, raw = data.draw(SECRET_KINDS[kind])
    ws = data.draw(words)
    pos = data.draw(st.integers(min_value=0, max_value=len(ws)))
    text = " ".join([*ws[:pos], inserted, *ws[pos:]])
    result = redact(text)
    assert raw not in result.text
    assert kind in result.kinds
    assert not contains_secret(result.text)
    assert redact(result.text).text == result.text


@pytest.mark.slow
@given(st.lists(st.one_of(*SECRET_KINDS.values()), min_size=1, max_size=5), words)
def test_many_secrets_all_removed(secrets: list[tuple[str, str]], ws: list[str]) -> None:
    text = " ".join(ws[:3] + [s for s, _ in secrets] + ws[3:])
    result = redact(text)
    for _, raw in secrets:
        assert raw not in result.text
    assert len(result.kinds) >= 1
    assert not contains_secret(result.text)


TRICKY = "aAkKsSeEyYJjIiPp0179-_:=@/.\"' \n\t[]{}$<>&;,*xXoObBhHgG"


@pytest.mark.slow
@settings(max_examples=300)
@given(st.one_of(st.text(), st.text(alphabet=TRICKY)))
def test_idempotent_on_arbitrary_text(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.kinds == ()


# -- redact_lines: what get and search show keeps its line numbers ---------------------------------
@pytest.mark.slow
@given(
    st.lists(st.one_of(*SECRET_KINDS.values()), min_size=1, max_size=4),
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12),
)
def test_redact_lines_keeps_lines_and_removes_every_secret(
    secrets: list[tuple[str, str]], ws: list[str]
) -> None:
    text = "\n".join([" ".join(ws), *(f"- note {s}" for s, _ in secrets), PEM, " ".join(ws)])
    result = redact_lines(text)
    assert result.text.count("\n") == text.count("\n")
    assert result.kinds == redact(text).kinds
    for _, raw in secrets:
        assert raw not in result.text
    assert not contains_secret(result.text)


def test_a_key_block_becomes_one_marker_per_line() -> None:
    shown = redact_lines(f"before\n{PEM}\nafter").text.splitlines()
    assert shown == ["before", *[marker("private-key")] * (len(PEM_BODY) + 2), "after"]


# -- the promise: docs/security.md's table of kinds, each held here --------------------------------
#: One line per kind docs/security.md promises (the kind, an input, what redaction leaves).
PROMISED: list[tuple[str, str, str]] = [
    ("private-key", PEM, marker("private-key")),
    ("aws-access-key", "id AKIAIOSFODNN7EXAMPLE", f"id {marker('aws-access-key')}"),
    (
        "aws-secret",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        f"aws_secret_access_key = {marker('aws-secret')}",
    ),
    (
        "aws-secret",
        "export AWS_SECRET_ACCESS_KEY wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        f"export AWS_SECRET_ACCESS_KEY {marker('aws-secret')}",
    ),
    ("github-token", f"ghp_{GH36}", marker("github-token")),
    ("slack-token", "xoxb-123456789012-AbCdEfGh", marker("slack-token")),
    ("api-key", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl", marker("api-key")),
    ("stripe-key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", marker("stripe-key")),
    ("google-api-key", "AIzaSyA1234567890abcdefghijklmnopqrstuv", marker("google-api-key")),
    ("gitlab-token", "glpat-Ab12Cd34Ef56Gh78Ij90", marker("gitlab-token")),
    ("huggingface-token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456", marker("huggingface-token")),
    ("npm-token", "npm_" + "a1B2c3D4e5" * 4, marker("npm-token")),
    ("azure-key", "AccountKey=Ab12Cd34Ef56Gh78Ij90Kl==", f"AccountKey={marker('azure-key')}"),
    ("jwt", JWT, marker("jwt")),
    (
        "url-credentials",
        "postgres://app:S3cr3t@db.internal:5432/app",
        f"postgres://app:{marker('url-credentials')}@db.internal:5432/app",
    ),
    (
        "url-credentials",
        "postgres://admin@myserver:S3cr3tPass@myserver.postgres.database.azure.com/db",
        f"postgres://admin@myserver:{marker('url-credentials')}"
        "@myserver.postgres.database.azure.com/db",
    ),
    ("password", "DB_PASSWORD=hunter2", f"DB_PASSWORD={marker('password')}"),
    ("password", "POSTGRES_PASS=hunter2", f"POSTGRES_PASS={marker('password')}"),
    ("password", "DB_PASS=hunter2", f"DB_PASS={marker('password')}"),
    ("password", "pass: hunter2", f"pass: {marker('password')}"),
    ("password", "MYSQL_PWD_ROOT=hunter2", f"MYSQL_PWD_ROOT={marker('password')}"),
    ("password", "Server=db;Uid=sa;Pwd=hunter2;", f"Server=db;Uid=sa;Pwd={marker('password')};"),
    ("password", 'client_secret: "abc123def"', f'client_secret: "{marker("password")}"'),
    (
        "password",
        "Authorization: Bearer abc.def.ghi",
        f"Authorization: Bearer {marker('password')}",
    ),
    (
        "netrc-password",
        "machine api.example.com login ada password hunter2",
        f"machine api.example.com login ada password {marker('netrc-password')}",
    ),
    (
        "pgpass-password",
        "db.example.com:5432:app:ada:hunter2",
        f"db.example.com:5432:app:ada:{marker('pgpass-password')}",
    ),
]

#: What redaction deliberately does not promise: each is left as it is.
NOT_PROMISED = [
    "the password is hunter2",  # prose: no separator between the word and the value
    "password=$DB_PASSWORD and token: ${{ secrets.GH }}",  # references, not values
    "password: <your-password>, secret: null",  # placeholders
    "DB_PASS_FILE=/run/secrets/db and pwd: /home/ada",  # paths
    "https://ada@example.com:8443/path@v2",  # a user, a port and a path
    "git+ssh://git@github.com:org/repo.git@v1.0",  # a user with '@', then a path
    "AWS_SECRET_ACCESS_KEY environment variable",  # a word, not a 40-character key
    "xoxb-no-digits-here",  # a Slack token holds a digit
    "sha256 3f9a1c2e7b4d8e0f1a2b3c4d5e6f7a8b9c0d1e2f",  # an unlabelled digest or key
    "we pass the build and compass=north",  # "pass" as a word of prose, or inside one
]


@pytest.mark.parametrize(("kind", "text", "expected"), PROMISED)
def test_every_promised_kind_is_redacted(kind: str, text: str, expected: str) -> None:
    result = redact(text)
    assert (result.text, set(result.kinds)) == (expected, {kind})


@pytest.mark.parametrize("text", NOT_PROMISED)
def test_what_is_not_promised_is_left_alone(text: str) -> None:
    assert redact(text) == Redaction(text, ())


def test_the_docs_list_every_kind_and_no_other() -> None:
    """docs/security.md's table of kinds is the promise: every kind redact can give, each
    with an example above."""
    from pathlib import Path

    from memcli.notes.redact import _rules

    doc = (Path(__file__).parent.parent / "docs" / "security.md").read_text()
    section = doc.split("**Secret redaction**", 1)[1].split("\n\n**", 1)[0]
    listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", section, re.MULTILINE))
    kinds = {kind for kind, _, _ in _rules()}
    assert listed == kinds == {kind for kind, _, _ in PROMISED}
