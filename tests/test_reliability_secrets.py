"""Secrets given to `memcli add` never reach memory/ or the index (the redaction rules themselves
are tested in test_redact.py); `--no-redact` opts out, for add only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from memcli.cli.app import app
from tests.conftest import Cli
from tests.test_reliability import index_bytes

# Built at run time so that no scanner mistakes this file for a leak.
GH = "ghp_" + "Zq81Lm0Xc4Vb7Nn2Aa9Ss3Dd6Ff1Gg5Hh8Jj"
PEM_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MaGZPl9GxmZTFbmJ\nq2YmHY2tP1xW1mYU=="
PEM = "-----BEGIN RSA PRIVATE " + "KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE " + "KEY-----"
JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJ1c2VyLTQyIn0" + ".Qm9ndXNTaWduYXR1cmVWYWx1ZTEyMw"

# kind -> (text given to add, the secret part that must never be stored)
CASES: dict[str, tuple[str, str]] = {
    "aws-access-key": ("the deploy key is AKIA" + "Q3EXAMPLEKEY7ZX9", "AKIAQ3EXAMPLEKEY7ZX9"),
    "aws-secret": (
        "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8kLm3pN",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8kLm3pN",
    ),
    "api-key": (
        "use " + "sk-" + "proj-Zq81Lm0Xc4Vb7Nn2Aa9Ss3Dd6Ff for evals",
        "Zq81Lm0Xc4Vb7Nn2Aa9",
    ),
    "github-token": (f"CI pushes with {GH}", GH),
    "slack-token": ("bot token xox" + "b-1234567890-0987654321-AbCdEfGhIjKl", "AbCdEfGhIjKl"),
    "private-key": (f"the deploy key:\n{PEM}", "MIIEowIBAAKCAQEA0Z3VS5"),
    "jwt": (f"session cookie {JWT} expires daily", JWT),
    "password": ("staging db password=hunter2-Zebra-77 until friday", "hunter2-Zebra-77"),
    "url-credentials": (
        "primary is postgres://app:S3cretPassw0rd@db.internal:5432/app",
        "S3cretPassw0rd",
    ),
}


def _memory_text(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in (root / "memory").rglob("*.md"))


def _stored_anywhere(root: Path, secret: str) -> bool:
    return secret in _memory_text(root) or secret.encode() in index_bytes(root)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_add_redacts_every_kind(cli: Cli, workspace: Path, kind: str) -> None:
    text, secret = CASES[kind]
    r = cli("add", "--json", text)
    assert r.exit_code == 0, r.stderr
    out = r.json()
    assert kind in out["redactions"]
    assert f"[REDACTED:{kind}]" in out["entry"]
    assert secret not in r.stdout + r.stderr  # not echoed either
    assert f"[REDACTED:{kind}]" in _memory_text(workspace)
    assert not _stored_anywhere(workspace, secret)
    # The rest of the fact is kept and searchable.
    r = cli("search", "--json", text.split()[0] + " " + text.split()[1])
    assert r.exit_code == 0 and r.json()["results"]
    # A secret in a tag or a type is caught too.
    r = cli(
        "add", "--json", "--tag", GH, "--type", "sk-" + "Zq81Lm0Xc4Vb7Nn2Aa9Ss3D", f"tagged {kind}"
    )
    assert r.exit_code == 0, r.stderr
    assert not _stored_anywhere(workspace, GH) and not _stored_anywhere(workspace, "Zq81Lm0Xc4Vb7")


def test_add_redacts_private_key_from_stdin(cli: Cli, workspace: Path) -> None:
    """A key block pasted through stdin, with prose around it, over many lines."""
    text = f"rotated the bastion key today\n{PEM}\nold one is revoked #ops\n"
    r = cli("add", "--json", "-", input=text)
    assert r.exit_code == 0, r.stderr
    assert r.json()["redactions"] == ["private-key"]
    stored = _memory_text(workspace)
    assert "rotated the bastion key today" in stored and "old one is revoked" in stored
    for line in PEM_BODY.splitlines():
        assert not _stored_anywhere(workspace, line)
    assert "PRIVATE KEY" not in stored


@pytest.mark.slow
def test_no_redact_opt_out_is_add_only(cli: Cli, workspace: Path) -> None:
    text, secret = CASES["password"]
    r = cli("add", "--no-redact", "--json", text)
    assert r.exit_code == 0, r.stderr
    assert r.json()["redactions"] == []
    assert secret in _memory_text(workspace)  # kept verbatim, as asked
    # The opt-out is per call: the next add redacts again.
    r = cli("add", "--json", CASES["github-token"][0])
    assert r.json()["redactions"] == ["github-token"]
    assert GH not in _memory_text(workspace)
    # No other command accepts --no-redact.
    group = typer.main.get_command(app)
    names = sorted(group.commands)  # type: ignore[attr-defined]
    assert "add" in names and len(names) > 3
    for name in names:
        if name == "add":
            continue
        r = cli(name, "--no-redact")
        assert r.exit_code == 2, (name, r.exit_code, r.stderr)
        assert "No such option" in r.stderr and "--no-redact" in r.stderr, (name, r.stderr)
    assert json.dumps(names)  # listed for the failure message above
