"""The developer commands stay described and in step: every make target has its line in
``make help``, and the pre-commit hooks run what ``make lint`` runs."""

from __future__ import annotations

import re
from pathlib import Path

import yaml  # type: ignore[import-untyped]  # (with MkDocs, a dev extra)

ROOT = Path(__file__).resolve().parent.parent


def _makefile() -> str:
    return (ROOT / "Makefile").read_text(encoding="utf-8")


def _phony(makefile: str) -> list[str]:
    found = re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", makefile, re.MULTILINE)
    assert found, "the Makefile declares its targets .PHONY"
    return found.group(1).replace("\\\n", " ").split()


def _described(makefile: str) -> set[str]:
    """The targets with a ``## line`` for ``make help``."""
    names: set[str] = set()
    for line in makefile.splitlines():
        found = re.match(r"^([a-z][a-z0-9 -]*):.*## ", line)
        if found:
            names.update(found.group(1).split())
    return names


def _recipe(makefile: str, target: str) -> list[str]:
    found = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert found, f"no recipe for {target}"
    return [line.strip() for line in found.group(1).splitlines()]


def test_every_target_has_its_line_in_make_help() -> None:
    makefile = _makefile()
    missing = [name for name in _phony(makefile) if name not in _described(makefile)]
    assert not missing, f"add `## what it does` to these targets' lines: {missing}"


def test_a_target_without_its_line_is_found() -> None:
    makefile = ".PHONY: help lint \\\n\tcheck\nhelp:  ## this list\n\techo\nlint:\n\truff\n"
    assert [n for n in _phony(makefile) if n not in _described(makefile)] == ["lint", "check"]


def _tools(commands: list[str]) -> set[str]:
    """``ruff check``, ``mypy``...: each command's tool and subcommand, wherever it is run from."""
    tools = set()
    for command in commands:
        words = command.replace("$(MKDOCS)", "mkdocs").split()
        tool = words[0].rsplit("/", 1)[-1]
        sub = words[1] if len(words) > 1 and words[1].isalpha() else ""
        tools.add(f"{tool} {sub}".strip())
    return tools


def test_pre_commit_runs_what_make_lint_runs() -> None:
    makefile = _makefile()
    lint = _recipe(makefile, "lint") + _recipe(makefile, "typecheck")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert all(repo["repo"] == "local" for repo in config["repos"]), "nothing fetched"
    entries = [h["entry"].removeprefix("env NO_MKDOCS_2_WARNING=1 ") for h in hooks]
    assert _tools(lint) == _tools(entries)
