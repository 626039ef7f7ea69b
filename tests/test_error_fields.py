"""Errors name the request's fields, never an adapter's spelling of them: the service, git
and flush word messages with field names (``MemcliError.fields``), the CLI names each as its
flag (``--to``), the MCP server as its tool's parameter (``to``)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memcli.errors import BadInput
from tests.conftest import Cli

PACKAGE = Path(__file__).resolve().parent.parent / "memcli"
#: Where errors are worded for every adapter alike.
SHARED = ("service", "git", "flush")
#: A command-line flag: ``--to``, ``-n``.
FLAG = re.compile(r"(?<![\w'{-])--?[a-z][\w-]*")
#: A command to run, quoted whole (``'git merge --abort'``, ``'memcli init --git'``).
QUOTED_COMMAND = re.compile(r"'(?:git|memcli) [^']*'")


def _text(node: ast.AST, constants: dict[str, str]) -> str:
    """The text a message expression makes, each interpolated value as ``X``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v, constants) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return _text(node.value, constants) if isinstance(node.value, ast.Constant) else "X"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left, constants) + _text(node.right, constants)
    if isinstance(node, ast.BoolOp):
        return " ".join(_text(v, constants) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _text(node.body, constants) + " " + _text(node.orelse, constants)
    if isinstance(node, ast.Name):
        return constants.get(node.id, "")
    return ""


def _messages(room_fields: list[Any] | None = None) -> list[tuple[str, int, str]]:
    """(file, line, text) of every message and hint an error raised under :data:`SHARED`
    carries, module constants named there included; ``room_fields`` gets each raise's
    (place, message expressions, the names it passes as ``fields``)."""
    found = []
    for room in SHARED:
        for path in sorted((PACKAGE / room).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            constants = {
                t.id: n.value.value
                for n in tree.body
                if isinstance(n, ast.Assign)
                and isinstance(n.value, ast.Constant)
                and isinstance(n.value.value, str)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
            for node in ast.walk(tree):
                if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
                    continue
                call = node.exc
                said = [*call.args, *(k.value for k in call.keywords if k.arg != "fields")]
                for arg in said:
                    text = _text(arg, constants)
                    if text:
                        found.append((str(path.relative_to(PACKAGE)), node.lineno, text))
                if room_fields is not None:
                    room_fields.append((f"{path.name}:{node.lineno}", said, _fields(call)))
    return found


def _fields(call: ast.Call) -> set[str]:
    """The field names a raise passes as ``fields=(...)``."""
    for k in call.keywords:
        if k.arg == "fields" and isinstance(k.value, ast.Tuple):
            return {str(e.value) for e in k.value.elts if isinstance(e, ast.Constant)}
    return set()


def test_no_error_of_the_service_names_a_command_line_flag() -> None:
    """A flag belongs to the CLI: the service names the field (``{to}``, with ``fields``),
    which each adapter words; a command quoted whole (``'git merge --abort'``) is allowed."""
    messages = _messages()
    assert len(messages) > 50  # the scan sees the raises
    flagged = [
        f"{path}:{line}: {text!r}"
        for path, line, text in messages
        if FLAG.search(QUOTED_COMMAND.sub("", text))
    ]
    assert not flagged, "\n".join(flagged)


def test_each_field_a_message_marks_is_one_it_declares() -> None:
    """``{to}`` in a message is a field only when the raise lists it in ``fields`` (else the
    braces would show); and a listed field is marked in its message or hint."""
    raises: list[Any] = []
    _messages(raises)
    checked = 0
    for place, said, fields in raises:
        marked = {
            m
            for arg in said
            for node in ast.walk(arg)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for m in re.findall(r"\{([a-z_]+)\}", node.value)
        }
        assert marked <= fields, (place, marked, fields)
        assert fields <= marked, (place, marked, fields)
        checked += bool(fields)
    assert checked >= 15


def test_an_error_names_its_fields_as_the_library_or_an_adapter_words_them() -> None:
    exc = BadInput(
        "{to} and {evergreen} cannot be combined", hint="drop {to}", fields=("to", "evergreen")
    )
    assert exc.message == str(exc) == "to and evergreen cannot be combined"
    assert exc.hint == "drop to"
    assert exc.worded(lambda f: f"--{f}") == (
        "--to and --evergreen cannot be combined",
        "drop --to",
    )
    plain = BadInput("a {to} that is not a field")
    assert plain.worded(lambda f: f"--{f}") == ("a {to} that is not a field", None)


def test_the_library_raises_with_field_names(workspace: Path) -> None:
    from memcli.memory import Memory

    with Memory.open(str(workspace)) as mem, pytest.raises(BadInput) as got:
        mem.add("A fact.", to="notes.md", evergreen=True)
    assert got.value.fields == ("to", "evergreen")
    assert got.value.message == "to and evergreen cannot be combined"
    with Memory.open(str(workspace)) as mem, pytest.raises(BadInput) as got:
        mem.context("x", mem.search_options(), 0)
    assert got.value.message == "max_tokens must be at least 1"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("add", "A fact.", "--to", "a.md", "--evergreen"),
            "--to and --evergreen cannot be combined",
        ),
        (("add", "A fact.", "--to", "a.txt"), "--to 'a.txt': memory files end in .md"),
        (("add", "A fact.", "--expires", "someday"), "--expires expects a date YYYY-MM-DD"),
        (
            ("search", "x", "--format", "context", "--max-tokens", "0"),
            "--max-tokens must be at least 1",
        ),
        (("search", "x", "--since", "whenever"), "--since expects a date YYYY-MM-DD"),
        (("search", "x", "--limit", "0"), "-n/--limit must be"),
        (("log", "-n", "0"), "-n/--limit must be at least 1"),
        (
            ("diff", "HEAD", "--since", "yesterday"),
            "give either a revision range or --since, not both",
        ),
        (("doctor", "--timeout", "0"), "--timeout must be more than 0 seconds"),
        (("forget", "memory/x.md:1", "--reason", " "), "--reason: why it is wrong"),
    ],
)
def test_the_cli_names_fields_as_its_flags(cli: Cli, args: tuple[str, ...], said: str) -> None:
    subprocess.run(["git", "init", "-q", str(cli.root)], check=True)
    r = cli(*args)
    assert r.exit_code == 2, r.stderr
    assert said in r.stderr


@pytest.mark.slow
def test_the_mcp_tools_name_fields_as_their_parameters(cli: Cli) -> None:
    """The same errors through the MCP SDK's own client: the tool's parameter, no flag."""
    pytest.importorskip("mcp")
    from tests.test_mcp import session, text_of

    assert cli("add", "Use Valkey for the session cache.").exit_code == 0

    async def body(s: object) -> list[str]:
        calls = [
            ("forget", {"fact": "memory/x.md:1", "reason": "  "}),
            ("context", {"query": "valkey", "max_tokens": 1}),
        ]
        out = []
        for name, args in calls:
            got = await s.call_tool(name, args)  # type: ignore[attr-defined]
            out.append(text_of(got))
        return out

    forget, context = session(cli.root, body)
    assert forget.endswith(": forget needs a reason (reason: why it is wrong)")
    assert "raise max_tokens" in context
    for text in (forget, context):
        assert not FLAG.search(text), text
