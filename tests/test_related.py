"""Words of software work that name one thing (memcli.search.related): the groups a text
names, the words recall adds to its keyword query, and recall with them through the real
hook process and the local model."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import memcli.search.related as related
from memcli.notes.entryparse import plain_entry
from memcli.search.nearest import cosine
from memcli.search.query import parse_query
from tests.agent_helpers import MEMCLI, context_of, run_hook


def labels(text: str) -> set[str]:
    return {related.groups()[g][0] for g in related.named(text)}


def test_every_line_of_the_file_is_a_group_with_a_label_and_terms() -> None:
    lines = [
        line
        for line in related.RELATED.read_text(encoding="utf-8").splitlines()
        if not line.startswith("#")
    ]
    assert len(lines) == len(related.groups()) >= 300
    assert all(re.fullmatch(r"[a-z0-9][^:]*: [^,]+(, [^,]+)+", line) for line in lines)
    names = [label for label, _ in related.groups()]
    assert len(names) == len(set(names))


def test_a_text_names_a_group_by_a_term_or_its_label_in_any_form() -> None:
    assert "deploy" in labels("How do I ship this?")
    assert "deploy" in labels("who deploys on Fridays")  # a verb ending
    assert "type checker" in labels("Which type checkers do we run?")  # a plural
    assert "release" in labels("how are releases tagged") == labels("who released it")
    assert "error tracking" in labels("errors go to Sentry")  # a tool
    assert "rollback" in labels("how do I roll back the release")  # a phrase
    assert not labels("Center this div horizontally")


def test_a_word_of_many_meanings_or_of_a_question_names_nothing() -> None:
    """ "what kind of" is no Kubernetes tool; an address is no TLS; a flag of a command is
    no feature flag; a term made of stop words only ("who did what") never counts."""
    assert "kubernetes" not in labels("What kind of cache do we use?")
    assert not labels("see https://example.com/x")
    assert "feature flag" not in labels("add a --verbose flag to the script")
    assert not labels("who did what")


def test_an_entry_names_things_in_its_own_words_only() -> None:
    """Not by its kind ("procedure" names runbooks), its tags, or a redaction marker."""
    entry = "- 09:30 [procedure] Ask Ada before lunch [REDACTED:aws-access-key] #aws #deploy"
    assert related.entry_named(entry) == frozenset()
    assert related.named("procedure aws access key deploy")  # each would name a group
    assert labels("- 09:30 [procedure] Deploy on Tuesdays") >= {"deploy"}


def test_the_longest_term_at_a_word_counts_not_the_words_inside_it() -> None:
    """A phrase such as "logged out" (sessions ending) names its group, not "logged"'s."""
    assert "session expiry" in labels("users get logged out too soon")
    assert "logging" not in labels("users get logged out too soon")
    assert "logging" in labels("the request is logged twice")


def test_related_words_are_the_groups_terms_the_text_does_not_hold() -> None:
    words = related.related_words("Which type checker do we use?")
    assert "mypy" in words and "pyright" in words
    assert "type checker" not in words  # the text says it already
    assert related.related_words("Center this div horizontally") == []


def test_a_long_paste_adds_at_most_so_many_words_those_it_names_first_first() -> None:
    """Each word added is one more term a keyword search scores: a paste naming many things
    adds the words of the first things it names, no more than MAX_WORDS."""
    paste = "the deploy failed: " + ", ".join(
        ["postgres timed out", "redis cache miss", "kafka consumer lag", "sentry errors"] * 20
    )
    words = related.related_words(paste)
    assert len(words) == related.MAX_WORDS
    assert "roll out" in words  # deploy's, named first
    assert len(related.related_words("deploy")) < related.MAX_WORDS


def test_the_expanded_query_keeps_the_text_and_quotes_each_phrase() -> None:
    text = "How do I ship this?"
    wider = related.expanded(text)
    assert wider.startswith(text + " ")
    parsed = parse_query(wider)
    assert "deploy" in parsed.terms
    assert ("roll", "out") in parsed.phrases  # "roll out": a phrase, not two words
    assert related.expanded("Center this div") == "Center this div"
    # a quote the prompt leaves open would pair with the first phrase added
    loose = parse_query(related.expanded('It says "connection refused: which port is valkey on?'))
    assert "port" in loose.terms and "valkey" in loose.terms


# -- recall with the local model, through the hook process -----------------------------------
MODEL_DIR = os.environ.get("MEMCLI_TEST_MODEL_DIR", "")  # read at import: see isolated_env
needs_model = pytest.mark.skipif(
    not MODEL_DIR or not Path(MODEL_DIR).is_dir(), reason="MEMCLI_TEST_MODEL_DIR not set"
)

FACTS = {
    "2026-11-20": [
        "- 09:10 [procedure] Deploy with `make release-prod`: it builds the image, runs the"
        " migrations and restarts the pods one at a time.",
        "- 09:40 [decision] Sessions expire after 20 minutes of inactivity; the refresh token"
        " lasts a week.",
        "- 10:05 [convention] Code is type-checked with pyright in strict mode and formatted"
        " with black.",
        "- 11:30 [fact] Unhandled errors are sent to Sentry, project web-api, with the release"
        " as a tag.",
    ],
    "2026-11-21": [
        "- 08:15 [gotcha] The nightly invoice export job holds a lock on the invoices table for"
        " about ten minutes.",
        "- 09:00 [decision] Feature work ships behind Unleash toggles that are deleted a month"
        " after full rollout.",
        "- 14:20 [constraint] Card numbers must never be written to logs, even masked.",
        "- 16:45 [procedure] To undo a bad release, run `helm rollback web` to the previous"
        " revision; the database is not rolled back.",
    ],
}


@pytest.fixture
def notes(workspace: Path) -> Path:
    """Eight facts of a web service in two day files (several entries a chunk)."""
    for day, lines in FACTS.items():
        (workspace / "memory" / f"{day}.md").write_text(f"# {day}\n\n" + "\n".join(lines) + "\n")
    return workspace


def index(root: Path) -> None:
    run = subprocess.run(
        [*MEMCLI, "-w", str(root), "index"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr


@pytest.fixture
def with_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "local/sentence-transformers/all-MiniLM-L6-v2")
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL_PATH", MODEL_DIR)


def recall(root: Path, prompt: str) -> str:
    proc = run_hook(
        [*MEMCLI, "agent", "hook", "prompt"], {"cwd": str(root), "prompt": prompt}, root
    )
    return context_of(proc, "UserPromptSubmit")


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize(
    ("prompt", "fact"),
    [  # neither the words nor the model alone bring these
        ("which type checker do we run?", "type-checked with pyright"),
        ("where do exceptions get reported?", "sent to Sentry"),
    ],
)
def test_with_the_local_model_a_prompt_recalls_a_fact_named_in_other_words(
    notes: Path, with_model: None, prompt: str, fact: str
) -> None:
    index(notes)
    text = recall(notes, prompt)
    assert fact in text, text
    # the block is titled with the prompt, not with the words added to its search
    assert f'Memory for "{prompt}"' in text
    assert "mypy" not in text and "rollbar" not in text


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize(
    "prompt",
    ["Make the search box autofocus", "Rename this variable to something clearer"],
)
def test_with_the_local_model_an_unrelated_prompt_still_gets_nothing(
    notes: Path, with_model: None, prompt: str
) -> None:
    index(notes)
    assert recall(notes, prompt) == ""


def test_a_recall_that_falls_back_to_keywords_searches_the_prompt_alone(
    notes: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The model's weights are damaged: recall's search falls back to keywords, and gives
    what a keyword recall gives. The related words' keywords would score the pyright
    convention under the keyword threshold: a keyword score falls with every word a query
    holds that the entry does not."""
    prompt = "do we run pyright in strict mode?"
    index(notes)
    keyword_only = recall(notes, prompt)
    assert "type-checked with pyright" in keyword_only
    broken = tmp_path / "broken"
    shutil.copytree(MODEL_DIR, broken)
    (broken / "model.onnx").chmod(0o644)
    (broken / "model.onnx").write_bytes(b"not a model")
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "local/sentence-transformers/all-MiniLM-L6-v2")
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL_PATH", str(broken))
    assert recall(notes, prompt) == keyword_only


DEPLOYS = [
    "- 09:10 [procedure] Deploy with `make release-prod`: it builds the image and restarts the"
    " pods one at a time.",
    "- 09:20 [fact] Deploys to production need a green CI run on main first.",
    "- 09:30 [constraint] No deploys to production on Fridays after 15:00.",
    "- 09:40 [fact] The deploy script posts a message in #releases when it finishes.",
    "- 09:50 [decision] Staging is deployed automatically on every merge to main.",
    "- 10:00 [gotcha] A deploy that changes the schema must run migrations before the new pods"
    " start.",
    "- 10:10 [fact] Rollouts go to 10% of the pods first, then the rest after five minutes.",
    "- 10:20 [procedure] Production deploys are announced in the #ops channel an hour ahead.",
]


@pytest.mark.slow
@needs_model
def test_with_the_local_model_recall_gives_at_most_its_limit_the_nearest_first(
    workspace: Path, with_model: None
) -> None:
    """Eight facts about deploys in one day file: many pass, at most agent.recall_limit (3)
    come, each nearer the prompt than the next."""
    (workspace / "memory" / "2026-11-20.md").write_text(
        "# 2026-11-20\n\n" + "\n".join(DEPLOYS) + "\n"
    )
    index(workspace)
    prompt = "what are the rules for deploying to production?"
    text = recall(workspace, prompt)
    given = [line for line in text.splitlines() if line.startswith("- ")]
    assert 1 <= len(given) <= 3, text
    from memcli.memory import Memory

    with Memory.open(workspace) as mem:
        assert mem.embedder is not None
        vector = mem.embedder.embed_query(prompt)
        sims = [cosine(vector, v) for v in mem.embedder.embed([plain_entry(g) for g in given])]
    assert sims == sorted(sims, reverse=True), (given, sims)
