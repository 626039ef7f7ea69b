"""The same fact in another Unicode form, or with an invisible character, is a duplicate."""

from __future__ import annotations

import unicodedata

import pytest

from memcli.notes.entries import fact_key
from tests.conftest import Cli

FACT = "Le café ouvre à 8 h"


@pytest.mark.parametrize(
    "variant",
    [
        unicodedata.normalize("NFD", FACT),  # é as e + combining accent
        FACT.replace("café", "ca\u200bfé"),  # a zero-width space inside a word
        FACT.replace("ouvre", "ou\u00advre"),  # a soft hyphen
        "\ufeff" + FACT,  # a byte-order mark in front
        FACT.replace("8", "\uff18"),  # a full-width digit
    ],
    ids=["nfd", "zero-width-space", "soft-hyphen", "bom", "full-width"],
)
def test_a_variant_of_a_fact_is_a_duplicate(cli: Cli, variant: str) -> None:
    first = cli("add", "--json", FACT).json()
    assert first["added"]
    again = cli("add", "--json", variant)
    assert again.exit_code == 0, again.stderr
    assert not again.json()["added"]
    assert again.json()["duplicate_of"] == f"{first['path']}:{first['line']}"


def test_different_facts_keep_different_keys() -> None:
    assert fact_key("café") != fact_key("cafe")  # an accent is a letter, not a form
    assert fact_key("Valkey") == fact_key("valkey.")
    assert fact_key("a\u200db") == fact_key("ab")
