"""docs/json.md names every field the JSON contract pins (tests/test_json_contract.py), each in
the row of its command, and every set of fields the contract declares has its row."""

from __future__ import annotations

import re

from tests import test_json_contract as contract
from tests.devtools import ROOT

#: The row of docs/json.md's table (its first cell) that documents each contract set.
ROWS = {
    "init": ["INIT", "INIT_WITH_HOOKS"],
    "add": ["ADD", "ADD_COMMIT"],
    "index": ["INDEX"],
    "search": ["SEARCH"],
    "search result": ["RESULT"],
    "search --batch": ["BATCH_ERROR"],
    "status": ["STATUS", "STATUS_EMBEDDING_KEYWORD", "STATUS_CACHE", "STATUS_GIT"],
    "files": ["FILES", "FILE"],
    "get": ["GET"],
    "flush": ["FLUSH", "DECISION", "FLUSH_WRITTEN", "FLUSH_SKIPPED"],
    "diff": ["DIFF", "DIFF_FILE", "DIFF_LINE", "DIFF_TOTALS"],
    "log": ["LOG", "COMMIT"],
    "hooks ...": ["HOOKS", "HOOK"],
    "sync": ["SYNC"],
    "config": [
        "CONFIG",
        "CONFIG_FILE",
        "CONFIG_SETTING",
        "CONFIG_GET",
        "CONFIG_SET",
        "CONFIG_UNSET",
        "CONFIG_EFFECTIVE",
        "CONFIG_PATH",
    ],
    "trust": ["TRUST", "TRUST_LIST", "TRUSTED_FILE"],
    "doctor": ["DOCTOR", "CHECK"],
    "watch --json": ["WATCH_READY", "WATCH_SYNC", "WATCH_STOPPED"],
    "--json, on an error": ["ERROR", "ERROR_BODY"],
}


def table_rows() -> dict[str, str]:
    """docs/json.md's table: first cell (backticks removed) -> the row's text."""
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) >= 2:
            rows[cells[0].removeprefix("| ").strip().replace("`", "")] = line
    return rows


def contract_sets() -> set[str]:
    return {
        name
        for name, value in vars(contract).items()
        if name.isupper() and isinstance(value, set) and all(isinstance(v, str) for v in value)
    }


def test_every_contract_set_has_a_row() -> None:
    named = {n for names in ROWS.values() for n in names}
    assert contract_sets() - named == set(), "add them to ROWS and to docs/json.md"
    assert named - contract_sets() == set()


def test_every_pinned_field_is_documented_in_its_row() -> None:
    rows = table_rows()
    missing = {}
    for row, names in ROWS.items():
        assert row in rows, f"docs/json.md has no row {row!r}"
        shown = set(re.findall(r"`([a-z_0-9]+)`", rows[row]))
        fields = set().union(*(getattr(contract, n) for n in names))
        if fields - shown:
            missing[row] = sorted(fields - shown)
    assert missing == {}, "fields the contract pins that docs/json.md does not name"
