"""README.md stays a short index of the docs site: its commands are real and its links resolve.

The rest of the documentation is the MkDocs site under ``docs/`` (``mkdocs build --strict`` in
``make lint`` checks its own links and anchors).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.devtools import ROOT, load_gendocs, load_gentour

README = ROOT / "README.md"
MAX_LINES = 250
gendocs = load_gendocs()
gentour = load_gentour()


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def _commands(text: str) -> list[str]:
    """The memcli command lines of the README's ``sh`` and ``console`` blocks, comments cut."""
    lines = []
    for block in _blocks(text, "sh") + _blocks(text, "console"):
        for line in block.splitlines():
            line = line.removeprefix("$ ")
            if line.startswith("memcli "):
                lines.append(shlex.join(shlex.split(line, comments=True)))
    return lines


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < MAX_LINES


def test_the_readme_commands_are_real() -> None:
    commands = _commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 6
    gendocs.check_examples(gendocs.command_tree(), [("README", "\n".join(commands))])


def test_a_command_that_does_not_exist_is_caught() -> None:
    text = "```sh\nmemcli serch cache   # a typo\n```\n"
    with pytest.raises(SystemExit, match="unknown command 'serch'"):
        gendocs.check_examples(gendocs.command_tree(), [("README", "\n".join(_commands(text)))])


def _anchors(page: str) -> set[str]:
    """The anchors MkDocs gives the page's headings (its default slugify)."""
    headings = re.findall(
        r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", page, flags=re.M | re.S), re.M
    )
    return {re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", h).strip().lower()) for h in headings}


def test_the_readme_links_resolve() -> None:
    """Every relative link names a file of the repository (and a heading of it, with an
    anchor), and every docs page is linked."""
    text = README.read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)]+)\)", text) if "://" not in t]
    for target in targets:
        path, _, anchor = target.partition("#")
        assert (ROOT / path).is_file(), target
        if anchor:
            assert anchor in _anchors((ROOT / path).read_text(encoding="utf-8")), target
    linked = {t.split("#")[0] for t in targets}
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert len(pages) >= 15
    assert pages - linked == set(), "pages the README does not link to"


@pytest.mark.slow
def test_the_quick_start_is_what_it_prints(tmp_path: Path) -> None:
    """The Quick start's commands, run as written in a new folder, print exactly what the
    README shows (but the date and the clock): `make tour` writes it from .ci/quickstart."""
    bin_dir = str(Path(sys.executable).parent)  # the memcli of this environment
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    current = gentour.page_quickstart(README.read_text(encoding="utf-8"))
    assert gentour.masked(current) == gentour.masked(gentour.fresh_quickstart(env)), "make tour"
    shown = re.findall(r"^\$ (.*)$", current, re.M)
    assert shown[0] == "memcli init" and any(c.startswith("memcli get ") for c in shown)
    for needed in ("Postgres", "Valkey"):  # what the output shows, the commands add
        assert any(needed in c for c in shown if c.startswith("memcli add"))


def test_the_install_lines_work_from_a_checkout() -> None:
    """No install line names a package index memcli is not on; `make demo` says how to put
    memcli on PATH, and the Makefile has the target that installs the agents' extras."""
    text = README.read_text(encoding="utf-8")
    install = text[text.index("## Install") : text.index("## Quick start")]
    assert "pip install 'memcli" not in install and "pip install memcli" not in install
    assert "make demo" in install and ".venv/bin" in install and "make extras" in install
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^extras:", makefile, re.M)
    assert ".[local,mcp]" in makefile
    demo = makefile[makefile.index("\ndemo:") : makefile.index("\nextras:")]
    assert "export PATH=" in demo
