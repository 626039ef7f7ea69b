"""README.md stays a short index of the docs site: its commands are real and its links resolve.

The rest of the documentation is the MkDocs site under ``docs/`` (``mkdocs build --strict`` in
``make lint`` checks its own links and anchors).
"""

from __future__ import annotations

import re
import shlex

import pytest

from tests.devtools import ROOT, load_gendocs

README = ROOT / "README.md"
MAX_LINES = 250
gendocs = load_gendocs()


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
