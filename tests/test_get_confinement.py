"""``get`` reads only the files the index covers, as text: never .env, .git/config or the index."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli


@pytest.mark.parametrize("rel", [".env", ".git/config", ".memcli/index.db", "deploy/secrets.txt"])
def test_files_outside_the_memory_are_refused(cli: Cli, workspace: Path, rel: str) -> None:
    assert cli("add", "a fact").exit_code == 0  # the index exists
    target = workspace / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.write_text("AWS_SECRET_ACCESS_KEY=do-not-print\n")
    run = cli("get", rel)
    assert run.exit_code == 2
    assert f"{rel} is not a memory file" in run.stderr
    assert "do-not-print" not in run.stdout and run.stdout == ""


def test_a_binary_memory_file_is_refused(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "blob.md").write_bytes(b"\x00\x01\x02 binary")
    run = cli("get", "memory/blob.md")
    assert run.exit_code == 2 and "is a binary file" in run.stderr


def test_memory_files_still_read(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "notes.md").write_text("# Notes\n\n- Valkey for sessions\n")
    run = cli("get", "--json", "memory/notes.md:3")
    assert run.exit_code == 0
    assert run.json()["text"] == "- Valkey for sessions"


def test_an_ignored_memory_file_is_refused(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "private.md").write_text("- kept out of the index\n")
    (workspace / ".memignore").write_text("memory/private.md\n")
    run = cli("get", "memory/private.md")
    assert run.exit_code == 2 and "is not a memory file" in run.stderr


def test_get_redacts_like_search_and_keeps_line_numbers(cli: Cli, workspace: Path) -> None:
    from tests.test_redact import PEM

    token = "ghp_" + "Zq81Lm0Xc4Vb7Nn2Aa9Ss3Dd6Ff1Gg5Hh8Jj"
    text = f"# Keys\n\n- CI pushes with {token}\n\n```\n{PEM}\n```\n- last line\n"
    (workspace / "memory" / "keys.md").write_text(text)
    whole = cli("get", "memory/keys.md").stdout
    assert token not in whole and "MII" not in whole
    assert whole.count("\n") == text.count("\n")
    # a window that starts inside the key block is redacted too (the whole file is read)
    inside = cli("get", "--json", "memory/keys.md:8:2").json()
    assert inside["text"] == "[REDACTED:private-key]\n[REDACTED:private-key]"
    assert cli("get", "memory/keys.md:10-11").stdout.endswith("- last line\n")
    assert cli("get", "memory/keys.md:11").stdout == "- last line\n"  # PATH:LINE: that line
    hit = cli("search", "--json", "CI pushes").json()["results"][0]
    assert token not in hit["snippet"] and "[REDACTED:github-token]" in hit["snippet"]
