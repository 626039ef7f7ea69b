"""JSON parity: every command's ``--json`` output on the benchmark corpus, for comparing builds.

Usage::

    python benchmarks/json_parity.py --memcli PATH/TO/memcli --out A.json [--files 300]
    python benchmarks/json_parity.py --compare A.json B.json

The first form builds a workspace in a temporary folder (the deterministic corpus of
``benchmarks/corpus.py``, in a git repository with two commits), starts the loopback
OpenAI-compatible stub of ``tests/stub_openai.py`` for embeddings and the flush model, and runs
a fixed script of commands with ``--json`` through the given ``memcli`` executable: init, add,
index, search in every output form and with filters, get, files, status, flush, diff, log,
hooks status, config and doctor. Each command's exit code and stdout are recorded after
replacing what differs between two runs (the temporary folder, the venv, the clock, the
date, commit ids, durations). The second form compares two recordings and prints every command
whose output differs; its exit code is 1 when any does.

A refactoring keeps behaviour when two builds give the same recording.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from corpus import generate  # noqa: E402

from tests import stub_openai  # noqa: E402
from tests.stub_openai import StubOpenAI  # noqa: E402

_stub_vector = stub_openai.stub_vector

CONVERSATION = [
    {"role": "user", "content": "Where do staging deploys run from?"},
    {"role": "assistant", "content": "From the release branch, with make deploy-staging."},
]
FACTS = json.dumps(
    {
        "facts": [
            {
                "text": "Staging deploys run from the release branch with make deploy-staging.",
                "type": "procedure",
                "tags": ["deploy"],
            }
        ]
    }
)

#: (name, arguments); stdin for the ones that read it comes from STDIN below.
SCRIPT: list[tuple[str, list[str]]] = [
    ("init", ["init", "--json"]),
    ("index", ["index", "--json"]),
    ("index-noop", ["index", "--json"]),
    ("add", ["add", "--json", "--type", "decision", "--tag", "infra", "Use Valkey for sessions."]),
    ("add-dup", ["add", "--json", "Use Valkey for sessions."]),
    ("add-ns", ["add", "--json", "--ns", "coder", "Run ruff before each commit."]),
    ("add-evergreen", ["add", "--json", "--evergreen", "Alice prefers small pull requests."]),
    ("search", ["search", "--json", "which cache do we use for sessions"]),
    ("search-n", ["search", "--json", "-n", "3", "deploy release branch"]),
    ("search-jsonl", ["search", "--jsonl", "export token"]),
    ("search-files", ["search", "--files", "export token"]),
    ("search-explain", ["search", "--json", "--explain", "-n", "2", "postgres upgrade"]),
    ("search-filters", ["search", "--json", "--type", "decision", "--source", "memory", "cache"]),
    ("search-since", ["search", "--json", "--since", "2020-01-01", "--until", "2021-01-01", "db"]),
    ("search-path", ["search", "--json", "--path", "memory/", "incident"]),
    ("search-decay", ["search", "--json", "--decay", "--mmr", "nightly export failed"]),
    ("search-keyword", ["search", "--json", "--strategy", "keyword", "nightly export"]),
    ("search-vector", ["search", "--json", "--strategy", "vector", "nightly export"]),
    ("search-hybrid", ["search", "--json", "--strategy", "hybrid", "nightly export"]),
    ("search-weighted", ["search", "--json", "--strategy", "hybrid", "--min-score", "0.2", "db"]),
    ("search-context", ["search", "--format", "context", "--max-tokens", "200", "cache"]),
    ("search-none", ["search", "--json", "zzzqqqxxy"]),
    ("search-batch", ["search", "--batch"]),
    ("get", ["get", "memory/MEMORY.md:1:3", "--json"]),
    ("get-missing", ["get", "memory/nosuch.md", "--json"]),
    ("files", ["files", "--json"]),
    ("status", ["status", "--json"]),
    ("flush-dry", ["flush", "--json", "--dry-run", "-"]),
    ("flush", ["flush", "--json", "-"]),
    ("flush-again", ["flush", "--json", "-"]),
    ("diff", ["diff", "--json"]),
    ("diff-range", ["diff", "--json", "HEAD~1..HEAD"]),
    ("log", ["log", "--json"]),
    ("hooks-status", ["hooks", "status", "--json"]),
    ("config-list", ["config", "--json"]),
    ("config-get", ["config", "get", "search.limit", "--json"]),
    ("config-bad", ["config", "get", "search.nosuch", "--json"]),
    ("doctor", ["doctor", "--json"]),
    ("search-after", ["search", "--json", "staging deploys"]),
]
STDIN = {
    "search-batch": "cache\nexport token\nzzzqqqxxy\n",
    "flush-dry": json.dumps(CONVERSATION),
    "flush": json.dumps(CONVERSATION),
    "flush-again": json.dumps(CONVERSATION),
}


def normalise(text: str, base: Path, stub_url: str, bin_dir: str) -> str:
    """What differs between two runs of one build, replaced by placeholders."""
    text = text.replace(str(base.resolve()), "<TMP>").replace(str(base), "<TMP>")
    text = re.sub(re.escape(bin_dir) + r"/python3?(\.\d+)?\b", "<BIN>/python", text)
    text = text.replace(stub_url, "<STUB>")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?", "<TIME>", text)
    text = text.replace(date.today().isoformat(), "<TODAY>")
    text = re.sub(r"\b[0-9a-f]{40}\b", "<SHA>", text)
    text = re.sub(r"\b(?=[0-9]*[a-f])[0-9a-f]{7,12}\b", "<SHA>", text)
    text = re.sub(r'"(indexed_at|last_indexed|bytes|mtime[a-z_]*)": [0-9.]+', r'"\1": <N>', text)
    text = re.sub(r"\b\d\d:\d\d\b", "<HH:MM>", text)
    text = re.sub(r'"(seconds|elapsed|duration|took|age)[a-z_]*": [0-9.e-]+', r'"\1": <N>', text)
    return text


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _clock_free_vector(text: str, dims: int) -> list[float]:
    """The stub's vector of ``text`` without today's date and HH:MM times: an entry added at
    09:14 and the same entry added at 09:15, or on another day, get one vector, so scores do not
    depend on the clock."""
    text = text.replace(date.today().isoformat(), "")
    return _stub_vector(re.sub(r"\b\d\d:\d\d\b", "", text), dims)


def record(memcli: str, files: int) -> dict[str, Any]:
    stub_openai.stub_vector = _clock_free_vector
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memcli-parity-") as tmp, StubOpenAI() as stub:
        base = Path(tmp)
        root = base / "ws"
        generate(root, files, quiet=True)
        (root / "corpus.json").unlink(missing_ok=True)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")},
            "MEMCLI_WORKSPACE": str(root),
            "MEMCLI_CONFIG_DIR": str(base / "config"),
            "MEMCLI_CACHE_DIR": str(base / "cache"),
            "MEMCLI_EMBEDDING_MODEL": "openai/stub-embed",
            "MEMCLI_EMBEDDING_API_BASE": stub.base_url,
            "MEMCLI_LLM_MODEL": "openai/stub-chat",
            "MEMCLI_LLM_API_BASE": stub.base_url,
            "OPENAI_API_KEY": "sk-parity",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "NO_PROXY": "127.0.0.1,localhost",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "parity",
            "GIT_AUTHOR_EMAIL": "parity@memcli.invalid",
            "GIT_COMMITTER_NAME": "parity",
            "GIT_COMMITTER_EMAIL": "parity@memcli.invalid",
            "HOME": str(base / "home"),
            "TZ": "UTC",
        }
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "corpus")
        for name, args in SCRIPT:
            if name == "diff":  # something to diff: the adds and the flush, committed
                git(root, "add", "-A")
                git(root, "commit", "-q", "-m", "learned")
            if name == "flush":
                stub.chat_replies = [FACTS]
            if name == "flush-dry":
                stub.chat_replies = [FACTS]
            proc = subprocess.run(
                [memcli, *args],
                input=STDIN.get(name, ""),
                capture_output=True,
                text=True,
                env=env,
                cwd=root,
                timeout=300,
            )
            out[name] = {
                "exit": proc.returncode,
                "stdout": normalise(proc.stdout, base, stub.base_url, str(Path(memcli).parent)),
            }
    return out


def compare(a: Path, b: Path) -> int:
    left, right = json.loads(a.read_text()), json.loads(b.read_text())
    differ = [name for name in left.keys() | right.keys() if left.get(name) != right.get(name)]
    for name in sorted(differ):
        print(f"differs: {name}\n  {a}: {left.get(name)!r}\n  {b}: {right.get(name)!r}")
    print(f"{len(left)} commands, {len(differ)} differ")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memcli", default=str(HERE.parent / ".venv" / "bin" / "memcli"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    result = record(args.memcli, args.files)
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
