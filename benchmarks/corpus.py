"""Deterministic generator of a realistic memory folder for the performance benchmarks.

Usage::

    python benchmarks/corpus.py DEST --files 10000 [--seed 1729]

Writes ``DEST/memory/...`` (and an empty ``DEST/.memcli``-free workspace marker) with
``--files`` Markdown notes:

* about three quarters are dated daily logs (``YYYY-MM-DD.md``) written in memcli's entry
  format (``- HH:MM [type] text #tags``), some with multi-line items, some with a
  ``## HH:MM flush · conversation <id>`` section, a few with front matter ``date:``;
* the rest are undated notes (architecture, runbooks, meeting notes, people, projects):
  headings two or three levels deep, prose paragraphs, plain bullet lists, numbered steps,
  fenced code and the odd table;
* files are spread over namespaces (``memory/`` itself and ``memory/<ns>/``), so that no
  namespace has more daily files than days in the covered period.

Every file is generated from its own ``Random(seed, index)``, so file *i* is the same
whatever the size, and a folder of 10k files starts with the 1k folder's files. Words follow
a Zipf-like distribution over a vocabulary of common English, technical terms and synthetic
names and ticket ids, so the index sees realistic term statistics (few very frequent terms,
a long tail of rare ones). A ``corpus.json`` manifest records the parameters; generating
again with the same parameters into the same folder is a no-op.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import random
import shutil
import sys
from datetime import date, timedelta
from pathlib import Path

GENERATOR_VERSION = 1
DEFAULT_SEED = 1729
START_DAY = date(2019, 1, 1)
DAYS = 2800  # about 7.7 years of daily logs per namespace
DATED_SHARE = 0.75

COMMON = """
the of and to a in is it that for on was with as be at by this have from or one had not but
what all were when we there can an your which their said if do will each about how up out
them then she many some so these would other into has more her two like him see time could
no make than first been its who now people my made over did down only way find use may
water long little very after words called just where most know get through back much go
good new write our me man too any day same right look think also around another came come
work three word must because does part even place well such here take why things help put
years different away again off went old number great tell men say small every found still
between name should home big give air line set own under read last never us left end along
while might next sound below saw something thought both few those always looked show large
often together asked house world going want school important until form food keep children
feet land side without boy once animals life enough took sometimes four head above kind
began almost live page got earth need far hand high year mother light parts country father
let night following picture being study second eyes soon times story boys since white days
ever paper hard near sentence better best across during today others however sure means
knew try told young miles sun ways thing whole hear example heard several change answer room
against top turned learn point city play toward five using himself usually money seen car
morning given list later hours fast quickly slowly problem team plan done already maybe
""".split()

TECH = """
cache redis valkey postgres sqlite index query latency throughput deploy rollback migration
schema table column replica primary failover backup restore snapshot bucket queue worker
cron scheduler retry backoff timeout deadline lock mutex thread process container image
kubernetes helm chart pod node cluster ingress gateway proxy nginx envoy tls certificate
token session cookie oauth login password secret vault config setting flag feature toggle
release version changelog branch merge rebase commit review pipeline build artifact wheel
package dependency lockfile python rust golang typescript react frontend backend api
endpoint handler router middleware logging metrics tracing alert pager incident outage
postmortem runbook oncall dashboard grafana prometheus budget quota limit shard partition
embedding vector model prompt context window chunk search ranking recall precision bm25
benchmark profile memory leak heap stack garbage allocator compiler linker test fixture
mock flaky coverage regression bisect debugger breakpoint traceback exception error warning
invoice billing payment refund customer account tenant region zone datacenter network
firewall dns resolver latency bandwidth packet socket websocket grpc protobuf json yaml
toml markdown terminal shell script makefile docker compose volume mount permission user
group role policy audit compliance gdpr retention archive export import parser tokenizer
stemmer unicode encoding utf8 locale timezone calendar meeting standup retro roadmap
milestone estimate sprint ticket bug fix patch hotfix upgrade downgrade deprecation
""".split()

TYPES = ["decision", "constraint", "preference", "incident", "procedure", "fact", "todo", "idea"]
NAMESPACES = [
    "coder",
    "research",
    "ops",
    "infra",
    "product",
    "support",
    "design",
    "data",
    "security",
    "billing",
    "search",
    "mobile",
    "web",
    "platform",
    "sre",
    "ml",
    "finance",
    "legal",
    "sales",
    "hiring",
    "docs",
    "qa",
    "release",
    "growth",
    "partners",
    "analytics",
    "edge",
    "storage",
    "network",
    "identity",
    "payments",
    "reporting",
    "compliance",
    "tooling",
    "devex",
    "kernel",
    "firmware",
    "robotics",
    "vision",
    "speech",
]
UNDATED_KINDS = ["architecture", "runbooks", "meetings", "people", "projects", "glossary", "howto"]
SYLLABLES = "ka ro mi tan vel or syn dra lu pex qui zor nal bri to fen mar ix obe cul".split()


def _vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    """Words with Zipf weights: common words first, then tech terms, then a synthetic tail."""
    words = list(dict.fromkeys(COMMON + TECH))
    rng.shuffle(words)
    tail: set[str] = set()
    while len(tail) < 6000:
        n = rng.choice((2, 2, 3, 3, 4))
        tail.add("".join(rng.choice(SYLLABLES) for _ in range(n)))
    words += sorted(tail)
    weights = [1.0 / (rank + 8) ** 1.05 for rank in range(len(words))]
    cum = list(itertools.accumulate(weights))
    return words, cum


class Corpus:
    """The generator for one seed; ``text(i)`` is file *i* (path, content)."""

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.seed = seed
        rng = random.Random(seed)
        self.words, self.cum = _vocabulary(rng)
        self.total = self.cum[-1]
        self.services = sorted(
            {
                "".join(rng.choice(SYLLABLES) for _ in range(2)) + s
                for s in ("-api", "-db", "-web", "d")
                for _ in range(40)
            }
        )
        self.people = sorted(
            {rng.choice(SYLLABLES).title() + rng.choice(SYLLABLES) for _ in range(120)}
        )

    # -- words -------------------------------------------------------------
    def _words(self, rng: random.Random, k: int) -> list[str]:
        cum, total, words = self.cum, self.total, self.words
        return [words[bisect.bisect(cum, rng.random() * total)] for _ in range(k)]

    def _ident(self, rng: random.Random) -> str:
        kind = rng.random()
        if kind < 0.4:
            return f"{rng.choice(('OPS', 'BUG', 'INC', 'FEAT', 'SEC'))}-{rng.randint(100, 9999)}"
        if kind < 0.7:
            return f"{rng.choice(self.services)}"
        if kind < 0.85:
            return f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"
        return f"CX-{rng.randint(1000, 9999)}-{rng.choice('ABCDEFGH')}"

    def sentence(self, rng: random.Random, lo: int = 6, hi: int = 18) -> str:
        words = self._words(rng, rng.randint(lo, hi))
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            words.insert(rng.randrange(len(words) + 1), self._ident(rng))
        if rng.random() < 0.2:
            words.insert(rng.randrange(len(words) + 1), rng.choice(self.people))
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice(".....!?")

    def paragraph(self, rng: random.Random) -> str:
        return " ".join(self.sentence(rng) for _ in range(rng.randint(2, 6)))

    # -- files -------------------------------------------------------------
    def layout(self, count: int) -> list[tuple[str, date | None]]:
        """(relative path, date or None) of files 0..count-1; stable prefix across sizes."""
        out: list[tuple[str, date | None]] = []
        seen: set[str] = set()
        for i in range(count):
            rng = random.Random(f"{self.seed}:layout:{i}")
            # namespace: memory/ itself or one of a growing set (fewer for small corpora)
            ns_count = 1 + min(len(NAMESPACES), max(3, i // 1800))
            ns = rng.randrange(ns_count)
            folder = "memory" if ns == 0 else f"memory/{NAMESPACES[ns - 1]}"
            if rng.random() < DATED_SHARE:
                day = START_DAY + timedelta(days=rng.randrange(DAYS))
                rel = f"{folder}/{day.isoformat()}.md"
                if rel in seen:  # day taken in this namespace: a second log for that day
                    rel = f"{folder}/{day.isoformat()}-{i}.md"
                out.append((rel, day))
            else:
                kind = rng.choice(UNDATED_KINDS)
                sub = kind if rng.random() < 0.6 else "notes"
                slug = "-".join(self._words(rng, 2)) + f"-{i}"
                rel = f"{folder}/{sub}/{slug}.md"
                out.append((rel, None))
            seen.add(out[-1][0])
        return out

    def dated(self, i: int, day: date) -> str:
        rng = random.Random(f"{self.seed}:file:{i}")
        parts: list[str] = []
        if rng.random() < 0.1:
            parts.append(
                f"---\ndate: {day.isoformat()}\ntags: [{', '.join(self._words(rng, 2))}]\n---\n"
            )
        parts.append(f"# {day.isoformat()}\n")
        minute = rng.randint(7 * 60, 10 * 60)
        for section in range(rng.choice((1, 1, 1, 2, 2, 3))):
            if section:
                minute += rng.randint(20, 120)
                conv = f"{rng.getrandbits(32):08x}"
                parts.append(
                    f"## {minute // 60 % 24:02d}:{minute % 60:02d} flush · conversation {conv}\n"
                )
            lines = []
            for _ in range(rng.randint(3, 14)):
                minute += rng.randint(1, 40)
                head = f"- {minute // 60 % 24:02d}:{minute % 60:02d} "
                if rng.random() < 0.7:
                    head += f"[{rng.choice(TYPES)}] "
                item = head + self.sentence(rng)
                if rng.random() < 0.5:
                    item += " " + " ".join(f"#{t}" for t in self._words(rng, rng.randint(1, 3)))
                for _ in range(rng.choice((0, 0, 0, 0, 1, 2))):
                    item += "\n  " + self.sentence(rng)
                lines.append(item)
            parts.append("\n".join(lines) + "\n")
        if rng.random() < 0.25:
            parts.append("Notes: " + self.paragraph(rng) + "\n")
        return "\n".join(parts)

    def undated(self, i: int, rel: str) -> str:
        rng = random.Random(f"{self.seed}:file:{i}")
        title = " ".join(w.title() for w in self._words(rng, rng.randint(2, 5)))
        parts = [f"# {title}\n", self.paragraph(rng) + "\n"]
        for _ in range(rng.randint(1, 6)):
            parts.append(f"## {' '.join(self._words(rng, rng.randint(1, 4))).capitalize()}\n")
            for _ in range(rng.randint(1, 3)):
                r = rng.random()
                if r < 0.45:
                    parts.append(self.paragraph(rng) + "\n")
                elif r < 0.7:
                    items = [f"- {self.sentence(rng, 3, 12)}" for _ in range(rng.randint(2, 7))]
                    parts.append("\n".join(items) + "\n")
                elif r < 0.82:
                    steps = [
                        f"{n}. {self.sentence(rng, 4, 12)}" for n in range(1, rng.randint(3, 7))
                    ]
                    parts.append("\n".join(steps) + "\n")
                elif r < 0.94:
                    cmd = " ".join(self._words(rng, 3))
                    code = [f"$ {rng.choice(self.services)} {cmd} --{rng.choice(TECH)}"]
                    code += [f"  {' '.join(self._words(rng, 5))}" for _ in range(rng.randint(1, 5))]
                    parts.append("```sh\n" + "\n".join(code) + "\n```\n")
                else:
                    rows = ["| name | value | note |", "|---|---|---|"]
                    rows += [
                        f"| {rng.choice(TECH)} | {rng.randint(1, 999)}"
                        f" | {' '.join(self._words(rng, 4))} |"
                        for _ in range(rng.randint(2, 6))
                    ]
                    parts.append("\n".join(rows) + "\n")
                if rng.random() < 0.2:
                    parts.append(f"### {' '.join(self._words(rng, 2)).capitalize()}\n")
                    parts.append(self.paragraph(rng) + "\n")
        return "\n".join(parts)

    def file(self, i: int, rel: str, day: date | None) -> str:
        return self.dated(i, day) if day is not None else self.undated(i, rel)


def generate(dest: Path, count: int, seed: int = DEFAULT_SEED, quiet: bool = False) -> dict:
    """Write the corpus into ``dest`` (a workspace folder); return its manifest."""
    manifest = {"generator": GENERATOR_VERSION, "files": count, "seed": seed}
    mpath = dest / "corpus.json"
    if mpath.is_file():
        try:
            old = json.loads(mpath.read_text())
        except ValueError:
            old = None
        if old and all(old.get(k) == v for k, v in manifest.items()):
            return old
    if (dest / "memory").exists():
        shutil.rmtree(dest / "memory")
    shutil.rmtree(dest / ".memcli", ignore_errors=True)
    corpus = Corpus(seed)
    total_bytes = 0
    made: set[Path] = set()
    for i, (rel, day) in enumerate(corpus.layout(count)):
        path = dest / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        data = corpus.file(i, rel, day).encode("utf-8")
        path.write_bytes(data)
        total_bytes += len(data)
        if not quiet and (i + 1) % 10000 == 0:
            print(f"  generated {i + 1}/{count} files", file=sys.stderr)
    manifest["bytes"] = total_bytes
    mpath.write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def corpus_paths(dest: Path, count: int, seed: int = DEFAULT_SEED) -> list[str]:
    return [rel for rel, _ in Corpus(seed).layout(count)]


def regenerate_files(dest: Path, count: int, indices: list[int], seed: int = DEFAULT_SEED) -> None:
    """Write files ``indices`` back to their generated content (after a benchmark edited them)."""
    corpus = Corpus(seed)
    layout = corpus.layout(count)
    for i in indices:
        rel, day = layout[i]
        (dest / rel).write_bytes(corpus.file(i, rel, day).encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dest", type=Path)
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = p.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    m = generate(args.dest, args.files, args.seed)
    print(json.dumps(m))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
