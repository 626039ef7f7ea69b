"""The docs' home page says how to install, has a five-line quick start that runs as written,
a "use with Claude Code / Codex" box, and how to read the site locally."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.devtools import ROOT, load_gendocs

HOME = ROOT / "docs" / "index.md"


def _section(title: str) -> str:
    page = HOME.read_text(encoding="utf-8")
    start = page.index(f"## {title}\n")
    end = page.find("\n## ", start + 1)
    return page[start : end if end > 0 else None]


def test_the_home_page_says_how_to_install() -> None:
    install = _section("Install")
    assert "make demo" in install and ".venv/bin" in install and "make extras" in install
    assert "pipx install" in install


@pytest.mark.slow
def test_the_quick_start_is_five_lines_that_run_as_written(tmp_path: Path) -> None:
    [block] = re.findall(r"^```sh\n(.*?)^```", _section("Quick start"), re.M | re.S)
    lines = [ln for ln in block.splitlines() if ln.strip()]
    assert len(lines) == 5 and all(ln.startswith("memcli ") for ln in lines)
    gendocs = load_gendocs()
    gendocs.check_examples(gendocs.command_tree(), [("docs/index.md", block)])
    folder = tmp_path / "notes"
    folder.mkdir()
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "NO_COLOR": "1",
    }
    env.pop("MEMCLI_WORKSPACE", None)
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("Use Valkey instead of Redis for the session cache.") >= 3


def test_the_home_page_has_a_claude_code_and_codex_box() -> None:
    page = HOME.read_text(encoding="utf-8")
    box = re.search(r'^!!! \w+ "Use with Claude Code or Codex"\n((?:    .*\n|\n)+)', page, re.M)
    assert box, "an admonition box"
    assert "memcli agent install claude-code" in box.group(1) and "codex" in box.group(1)


def test_the_home_page_says_how_to_view_the_site() -> None:
    site = _section("This site")
    assert "make site" in site and "mkdocs serve" in site
