"""Memory that stays true: scripted histories of facts that change, then a question.

Usage::

    python benchmarks/lifecycle_bench.py [--quick]

Each history adds a fact, changes it one to three times (alternately with ``memcli
supersede`` and by flushing a conversation that states the change, the model being the
loopback stub of ``tests/stub_openai.py``), then asks about it. Every history lives in one
workspace, so the others are its distractors. Reported:

* **current on top**: the share of questions whose top result holds the current version;
* **stale in top 3**: the share whose three first results show an older version;
* **contradictions caught**: the share of flushed changes that flush decided as update or
  conflict (not add), once with the stub answering the decision request like a good model
  and once with the rule-based path alone (the decision request gets no usable answer).

Run twice (a good model, rules alone); each run builds its own workspace in memory, with
``now`` moving a day per change. Figures are printed as Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: One subject per history (a service, a team...): each fact is about a different thing.
SUBJECTS = (
    "billing search auth checkout reporting inventory shipping catalog pricing ledger"
    " invoicing payroll gateway notifier scheduler exporter importer indexer crawler mailer"
    " profile session analytics metrics tracing logging storage uploads thumbnails media"
    " chat comments reviews ratings loyalty coupons refunds fraud risk compliance"
    " onboarding signup identity consent audit backup archive migration sandbox staging"
    " forecast planner routing dispatch tracking warehouse procurement vendor contracts support"
).split()


class Template(NamedTuple):
    fact: str  # with {s} (the subject) and {v} (the value)
    question: str
    values: tuple[str, ...]


TEMPLATES = [
    Template(
        "The {s} S3 upload token rotates every {v} days.",
        "How often does the {s} S3 upload token rotate?",
        ("90", "30", "14", "7"),
    ),
    Template(
        "The {s} service caches sessions in {v}.",
        "Where does the {s} service cache sessions?",
        ("Redis", "Valkey", "Memcached", "Dragonfly"),
    ),
    Template(
        "The {s} database listens on port {v}.",
        "Which port does the {s} database listen on?",
        ("5432", "6432", "7432", "8432"),
    ),
    Template(
        "Production deploys of {s} happen on {v}.",
        "When are production deploys of {s}?",
        ("Tuesdays", "Thursdays", "Mondays", "Wednesdays"),
    ),
    Template(
        "The {s} API allows {v} requests per minute.",
        "What is the rate limit of the {s} API?",
        ("600", "1200", "300", "2400"),
    ),
    Template(
        "The {s} team is led by {v}.",
        "Who leads the {s} team?",
        ("Alice Moreau", "Bram Visser", "Chen Wei", "Dara Okafor"),
    ),
    Template(
        "Logs of {s} are kept for {v} days.",
        "How long are {s} logs kept?",
        ("30", "90", "180", "365"),
    ),
    Template(
        "The {s} frontend is built with {v}.",
        "Which tool builds the {s} frontend?",
        ("webpack", "Vite", "esbuild", "Parcel"),
    ),
    Template(
        "The {s} nightly backup runs at {v} UTC.",
        "When does the {s} nightly backup run?",
        ("02:00", "03:30", "01:15", "04:45"),
    ),
    Template(
        "The {s} service runs {v} replicas in production.",
        "How many replicas does the {s} service run?",
        ("3", "5", "8", "2"),
    ),
    Template(
        "Alerts for {s} page the {v} channel.",
        "Which channel do {s} alerts page?",
        ("ops-alerts", "sre-pager", "oncall-core", "incident-room"),
    ),
    Template(
        "The {s} queue is consumed by {v} workers.",
        "How many workers consume the {s} queue?",
        ("4", "12", "6", "16"),
    ),
]


class History(NamedTuple):
    template: Template
    subject: str
    changes: int  # 1 to 3

    def version(self, i: int) -> str:
        return self.template.fact.format(s=self.subject, v=self.template.values[i])


def histories(quick: bool) -> list[History]:
    out = [
        History(TEMPLATES[n % len(TEMPLATES)], subject, 1 + n % 3)
        for n, subject in enumerate(SUBJECTS)
    ]
    return out[:15] if quick else out


def run(mode: str, quick: bool) -> dict[str, Any]:
    """Build the histories in a fresh workspace; ``mode`` is ``model`` or ``rules``."""
    from memcli.memory import Memory
    from memcli.notes.workspace import init_workspace
    from memcli.service.datatypes import FlushOptions
    from tests.stub_openai import StubOpenAI

    hs = histories(quick)
    caught = flushed = 0
    with tempfile.TemporaryDirectory(prefix="memcli-lifecycle-") as tmp, StubOpenAI() as stub:
        root = Path(tmp) / "ws"
        root.mkdir()
        init_workspace(root)
        os.environ.update(
            MEMCLI_CONFIG_DIR=str(Path(tmp) / "config"),
            MEMCLI_CACHE_DIR=str(Path(tmp) / "cache"),
            MEMCLI_LLM_MODEL="openai/stub-chat",
            MEMCLI_LLM_API_BASE=stub.base_url,
            MEMCLI_LLM_MAX_RETRIES="0",
            OPENAI_API_KEY="sk-stub",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            NO_PROXY="127.0.0.1,localhost",
        )
        start = datetime(2026, 1, 5, 9, 0)
        with Memory.open(root) as mem:
            for h in hs:
                mem.add(h.version(0), type="fact", now=start)
            for step in range(1, 4):
                now = start + timedelta(days=step)
                for n, h in enumerate(hs):
                    if step > h.changes:
                        continue
                    old, new = h.version(step - 1), h.version(step)
                    old_id = _id(old)
                    if (n + step) % 2:  # by hand
                        mem.supersede(old_id, new, now=now)
                        continue
                    stub.chat_replies = [json.dumps({"facts": [{"text": new, "type": "fact"}]})]
                    if mode == "model":
                        stub.chat_replies.append(
                            json.dumps(
                                {"decisions": [{"n": 1, "decision": "update", "target": old_id}]}
                            )
                        )
                    else:
                        stub.chat_replies.append("{}")  # no usable answer: rules alone
                    convo = [
                        {"role": "user", "content": f"Heads up, this changed: {new}"},
                        {"role": "assistant", "content": "Noted, I will use that from now on."},
                    ]
                    result = mem.flush(FlushOptions(text=json.dumps(convo), now=now))
                    stub.chat_replies = []
                    flushed += 1
                    decided = [o.decision for o in result.written if o.fact.text == new]
                    caught += bool(decided and decided[0] in ("update", "conflict"))
            top = stale3 = 0
            for h in hs:
                current = h.version(h.changes)
                olds = [h.version(i) for i in range(h.changes)]
                opts = mem.search_options()
                hits = mem.search(h.template.question.format(s=h.subject), opts).hits[:3]
                top += bool(hits) and current in hits[0].snippet
                stale3 += any(o in hit.snippet for hit in hits for o in olds)
    return {
        "mode": mode,
        "histories": len(hs),
        "current_on_top": top / len(hs),
        "stale_in_top3": stale3 / len(hs),
        "flushed_changes": flushed,
        "caught": caught / flushed if flushed else 0.0,
    }


def _id(text: str) -> str:
    from memcli.notes.entryparse import entry_id

    return entry_id(text)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="15 histories")
    args = p.parse_args(argv)
    rows = [run("model", args.quick), run("rules", args.quick)]
    print(f"\nLifecycle histories ({rows[0]['histories']}, 1-3 changes each):\n")
    print("| decisions by | current on top | stale in top 3 | flushed changes | caught |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        who = "rules, then the model" if r["mode"] == "model" else "rules alone"
        print(
            f"| {who} | {r['current_on_top']:.1%} | {r['stale_in_top3']:.1%}"
            f" | {r['flushed_changes']} | {r['caught']:.1%} |"
        )


if __name__ == "__main__":
    main()
