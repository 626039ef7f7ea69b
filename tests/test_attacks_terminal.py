"""Memory text and file names that would make the reader's terminal show something other
than what they hold: bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069, the
Trojan Source characters). Every command that prints them on a terminal shows them escaped
(``\\u202e``), as it shows ESC (``\\x1b``); piped output and files keep them as they are.
Run end to end: a real clone, the real ``memcli`` on a pseudo-terminal.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_attacks import git, hostile_clone
from tests.test_conventions import on_terminal as terminal_run

pytestmark = pytest.mark.slow

RLO, LRI, PDI = "\u202e", "\u2066", "\u2069"
RAW = [c.encode() for c in (RLO, LRI, PDI)]
NAME = f"memory/wombat-{RLO}dm.txt.md"  # a right-to-left override in a name
NOTE = f"# Wombats\n\n- The wombat key is {RLO}1234{PDI} and {LRI}abc{PDI}.\n"


def on_terminal(cwd: Path, *args: str) -> bytes:
    """Run memcli on the workspace ``cwd`` with stdout and stderr on pseudo-terminals; what
    it wrote to both."""
    code, out, err = terminal_run(cwd, *args, env={"COLUMNS": "200"})
    assert code in (0, 1), out + err
    return out + err


def indexed_clone(folder: Path) -> Path:
    clone = hostile_clone(folder, {NAME: NOTE})
    assert subprocess.run([sys.executable, "-m", "memcli", "index"], cwd=clone).returncode == 0
    return clone


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One clone for the tests that only read it."""
    return indexed_clone(tmp_path_factory.mktemp("bidi"))


@pytest.mark.parametrize(
    "args",
    [
        ["search", "wombat"],
        ["search", "--format", "text", "wombat"],
        ["search", "--json", "wombat"],
        ["files"],
        ["get", NAME],
    ],
)
def test_bidi_controls_are_escaped_on_a_terminal(clone: Path, args: list[str]) -> None:
    out = on_terminal(clone, *args)
    assert b"wombat" in out, out
    assert not any(raw in out for raw in RAW), out
    assert b"\\u202e" in out, out


def test_diff_escapes_them_too(tmp_path: Path) -> None:
    clone = indexed_clone(tmp_path)
    path = clone / NAME
    path.write_text(NOTE + f"- The wombat moved to {RLO}tfel{PDI} today.\n")
    git(clone, "commit", "-qam", "more")
    out = on_terminal(clone, "diff", "HEAD~1..HEAD")
    assert b"wombat moved" in out, out
    assert not any(raw in out for raw in RAW), out
    assert b"\\u202etfel\\u2069" in out, out


def test_piped_output_keeps_the_text_as_it_is(clone: Path) -> None:
    """Data piped to a program is exact: the escaping is for a person's terminal only."""
    run = subprocess.run(
        [sys.executable, "-m", "memcli", "get", NAME], cwd=clone, capture_output=True, text=True
    )
    assert run.returncode == 0 and f"{RLO}1234{PDI}" in run.stdout, run.stderr
