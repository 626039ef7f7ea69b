"""Text in any script is searchable: CJK and Thai runs, mixed text, Korean particles, other
scripts and accents; prefix queries; --path globs; the context budget of CJK text; an index
made before the grams column is rebuilt."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memcli.index import bigrams as g
from memcli.search.context import estimate_tokens
from memcli.search.query import parse_query
from tests.conftest import Cli

FACTS = {
    "zh": "缓存改用 Valkey 集群",
    "ja": "キャッシュはValkeyに移行した",
    "ko": "백업은 매일 새벽 3시에 실행된다",
    "th": "ร้านกาแฟเปิดทุกวัน",
    "ru": "Сервер перезапускается каждую ночь",
    "el": "Το αντίγραφο ασφαλείας τρέχει κάθε βράδυ",
    "ar": "النسخ الاحتياطي يعمل كل ليلة",
    "fr": "Le café est fermé le lundi",
}


@pytest.fixture
def multi(cli: Cli, workspace: Path) -> Cli:
    for lang, text in FACTS.items():  # one file each: a hit names its language
        (workspace / "memory" / f"{lang}.md").write_text(f"- {text}\n", encoding="utf-8")
    assert cli("index").exit_code == 0
    return cli


def paths(cli: Cli, *args: str) -> list[str]:
    r = cli("search", "--json", *args)
    assert r.exit_code in (0, 1), r.stderr
    return [h["path"].removeprefix("memory/").removesuffix(".md") for h in r.json()["results"]]


@pytest.mark.parametrize(
    ("query", "lang"),
    [
        ("缓存", "zh"),  # the start of a run
        ("集群", "zh"),  # a run of its own
        ("存改", "zh"),  # inside a run
        ("缓存改用", "zh"),  # the whole run
        ("缓", "zh"),  # one character
        ("用", "zh"),  # the last character of a run
        ("キャッシュ", "ja"),
        ("移行", "ja"),
        ("백업", "ko"),  # a word with its particle attached in the text (백업은)
        ("새벽", "ko"),
        ("กาแฟ", "th"),
        ("сервер", "ru"),
        ("Сервер", "ru"),
        ("αντίγραφο", "el"),
        ("النسخ", "ar"),
        ("cafe", "fr"),  # accents folded both ways
        ("café", "fr"),
        ('"缓存改用"', "zh"),  # a quoted run is a phrase of its pieces
    ],
)
def test_a_word_of_any_script_finds_its_fact(multi: Cli, query: str, lang: str) -> None:
    assert paths(multi, query)[:1] == [lang]


def test_a_latin_word_is_found_inside_or_beside_cjk_text(multi: Cli) -> None:
    assert set(paths(multi, "Valkey")) == {"zh", "ja"}  # beside (zh) and glued to kana (ja)


def test_a_cjk_query_does_not_match_other_scripts(multi: Cli) -> None:
    assert paths(multi, "缓存") == ["zh"]
    assert paths(multi, "ภาษา") == []


def test_a_phrase_of_cjk_pieces_needs_them_in_a_row(multi: Cli) -> None:
    assert paths(multi, '"缓存改用"') == ["zh"]
    assert paths(multi, '"缓用"') == []  # both characters are there, not side by side


def test_grams_of_text_and_query_line_up() -> None:
    assert g.grams("plain ascii text") == ""
    assert g.grams("缓存改用 Valkey") == "缓存 存改 改用 缓 存 改 用"
    assert g.grams("キャッシュはValkeyに") == "キャ ャッ ッシ シュ ュは キ ャ ッ シ ュ は に Valkey"
    assert g.query_pieces("缓存改用") == (["缓存", "存改", "改用"], [])
    assert g.query_pieces("缓存") == (["缓存"], [])
    assert g.query_pieces("Valkey集群") == (["集群"], ["Valkey"])
    q = parse_query("Valkey集群 backup")
    assert set(q.terms) == {"集群", "valkey", "backup"}


def test_prefix_query(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "a.md").write_text("- the cache moved to Valkey\n")
    (workspace / "memory" / "b.md").write_text("- the valley is green\n")
    assert cli("index").exit_code == 0
    assert paths(cli, "valk*") == ["a"]
    assert set(paths(cli, "val*")) == {"a", "b"}
    assert paths(cli, "zzq*") == []
    r = cli("search", "--json", "--explain", "valk*")
    assert "valk*" in str(r.json()["results"][0]["explain"])  # the prefix is what matched
    assert parse_query("valk* cache").prefixes == ("valk",)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("coder/*", {"coder/notes"}),  # from the memory folder
        ("memory/coder/*", {"coder/notes"}),  # from the workspace
        ("*.md", {"2026-11-01", "coder/notes", "ops/deep/run"}),  # a name in any folder
        ("memory/2026-11-*", {"2026-11-01"}),
        ("2026-11-*", {"2026-11-01"}),
        ("coder", {"coder/notes"}),  # a folder prefix
        ("memory/ops/", {"ops/deep/run"}),
        ("ops/**/*.md", {"ops/deep/run"}),
        ("cod", set()),  # a prefix is a whole folder or file name
        ("notes.md", {"coder/notes"}),
    ],
)
def test_path_takes_globs_and_prefixes(
    cli: Cli, workspace: Path, pattern: str, expected: set[str]
) -> None:
    for rel in ("2026-11-01.md", "coder/notes.md", "ops/deep/run.md"):
        path = workspace / "memory" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("- valkey runs here\n")
    assert cli("index").exit_code == 0
    assert set(paths(cli, "--path", pattern, "valkey")) == expected


def test_path_help_says_globs() -> None:
    from memcli.cli.search_args import OPTIONS

    (help_text,) = [o.help for o in OPTIONS if o.field == "path"]
    assert "glob" in help_text and "coder/*" in help_text


def test_token_estimate_counts_cjk_characters_as_tokens() -> None:
    assert estimate_tokens("a" * 40) == 10  # English: characters / 4, as before
    assert estimate_tokens("缓" * 40) == 40  # one token a character
    assert estimate_tokens("é" * 40) == 20


def test_context_of_cjk_text_fits_its_budget(cli: Cli, workspace: Path) -> None:
    for i in range(10):
        text = f"- 第{i}条：缓存集群在凌晨三点自动重启并记录日志\n"
        (workspace / "memory" / f"zh{i}.md").write_text(text, encoding="utf-8")
    assert cli("index").exit_code == 0
    sizes = []
    for budget in (100, 200, 400):
        r = cli(
            "search", "-n", "10", "--format", "context", "--max-tokens", str(budget), "缓存集群"
        )
        assert r.exit_code == 0, r.stderr
        assert 0 < estimate_tokens(r.stdout) <= budget
        assert "缓存集群" in r.stdout
        sizes.append(r.stdout.count("缓存集群"))
    assert sizes[0] < sizes[2]  # a larger budget holds more of the facts


def test_snippets_keep_whole_graphemes(cli: Cli, workspace: Path) -> None:
    line = "- 👩‍👩‍👧 家族の予定 e\u0301t\u0301e\u0301 ดี " + "缓存" * 300 + "\n"
    (workspace / "memory" / "a.md").write_text(line * 3, encoding="utf-8")
    assert cli("index").exit_code == 0
    r = cli("search", "--json", "家族")
    snippet = r.json()["results"][0]["snippet"]
    for piece in snippet.split("\n"):  # a snippet is made of whole lines of the file
        assert piece + "\n" in line * 3 or piece == ""


def test_an_index_made_before_grams_is_rebuilt(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "zh.md").write_text("- 缓存改用 Valkey 集群\n", encoding="utf-8")
    assert cli("index").exit_code == 0
    db = workspace / ".memcli" / "index.db"
    conn = sqlite3.connect(db)  # make it an index of schema 2: two FTS columns, old stamp
    conn.execute("DROP TABLE chunks_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, heading,"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute(
        "INSERT INTO chunks_fts (rowid, text, heading) SELECT id, '- 缓存改用 Valkey 集群', ''"
        " FROM chunks"
    )
    conn.execute(
        "UPDATE meta SET value = '{\"chars\": 1200, \"chunker\": 3}' WHERE key = 'chunking'"
    )
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    assert paths(cli, "缓存") == ["zh"]
    cols = [r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(chunks_fts)")]
    assert cols == ["text", "heading", "grams"]
