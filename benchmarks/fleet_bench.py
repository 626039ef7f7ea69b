"""A fleet of agents sharing memory through git: nothing reported saved is lost.

Usage::

    python benchmarks/fleet_bench.py [--clones 2,4,8] [--seconds 300] [--quick]
                                     [--write-results]

For each clone count N: one bare remote, N clones of it, each driven by its own process that
adds facts (``memcli add``), supersedes some of its own (``memcli supersede``) and syncs
(``memcli sync``) at random intervals for ``--seconds``, all at once. Then every clone syncs
until a whole round brings nothing new, and the run is checked:

* every fact whose ``add`` exited 0 is in every clone exactly once;
* every ``supersede`` that exited 0 is applied once: one ``superseded by`` line names its
  successor, and it stands under the old fact (not moved under another by a merge), and the
  successor is there once;
* no conflict markers, the same memory files byte for byte in every clone, and no sync left
  failed after the final rounds;
* no ``add`` or ``supersede`` refused, no ``add`` of a new text answered "already there", and
  no ``superseded by`` line that no reported supersede wrote.

Reported per N: facts per second (adds that exited 0, all clones together), sync time p50 and
p95, rounds (fetch-integrate-push attempts) per sync beyond the first, syncs that failed and
were retried, and the load average (1 min) before, after and on average while it ran.
``--quick``: N = 2 and 4 for 20 s. The exit code is 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

MEMCLI = [sys.executable, "-m", "memcli", "-q"]
MARKERS = re.compile(r"^(<<<<<<<|>>>>>>>|=======$)", re.MULTILINE)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def memcli(clone: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMCLI, "-w", str(clone), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(clone.name),
    )


def _env(name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCLI_", "GIT_"))}
    env.update(
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=f"{name}@fleet.invalid",
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=f"{name}@fleet.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        MEMCLI_RUNTIME_DIR=str(Path(tempfile.gettempdir()) / f"fleet-run-{os.getpid()}"),
    )
    return env


def setup(base: Path, n: int) -> list[Path]:
    """A bare remote with an initialised workspace, and ``n`` clones of it."""
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(remote))
    seed = base / "seed"
    git(base, "clone", "-q", str(remote), str(seed))
    env = _env("seed")
    subprocess.run([*MEMCLI, "init", str(seed)], check=True, env=env, capture_output=True)
    git(seed, "add", "-A")
    subprocess.run(["git", "commit", "-qm", "workspace"], cwd=seed, check=True, env=env)
    subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=seed, check=True, env=env)
    clones = []
    for i in range(n):
        clone = base / f"c{i}"
        git(base, "clone", "-q", str(remote), str(clone))
        clones.append(clone)
    return clones


# -- one clone's agent ------------------------------------------------------------------------
def worker(clone: Path, seconds: float, seed: int, out: Path) -> None:
    """Add, supersede and sync at random until the time is up; write what happened."""
    rng = random.Random(seed)
    log: dict[str, Any] = {
        "added": [],
        "superseded": [],
        "syncs": [],
        "failed": [],
        "refused": [],  # an add or supersede that exited non-zero, or an add not added
    }
    deadline = time.monotonic() + seconds
    next_sync = time.monotonic() + rng.uniform(1, 6)
    n = 0
    while time.monotonic() < deadline:
        if time.monotonic() >= next_sync:
            t0 = time.perf_counter()
            run = memcli(clone, "sync", "--json")
            took = time.perf_counter() - t0
            attempts = 0
            if run.returncode == 0:
                try:
                    attempts = int(json.loads(run.stdout).get("attempts", 1))
                except ValueError:
                    attempts = 1
            else:
                log["failed"].append(run.stderr.strip()[-300:])
            log["syncs"].append({"seconds": took, "attempts": attempts, "exit": run.returncode})
            next_sync = time.monotonic() + rng.uniform(1, 6)
            continue
        own = [a for a in log["added"] if a["text"] not in {s["old"] for s in log["superseded"]}]
        if own and rng.random() < 0.15:
            old = rng.choice(own)
            new = f"{old['text']} (revised {n})"
            run = memcli(clone, "supersede", old["id"], new, "--json")
            if run.returncode == 0:
                log["superseded"].append({"old": old["text"], "old_id": old["id"], "new": new})
                log["added"].append({"text": new, "id": _id(new)})
            else:
                log["refused"].append(f"supersede {old['id']}: {run.stderr.strip()[-300:]}")
        else:
            text = f"Fleet fact {clone.name}-{n}: {rng.choice(WORDS)} {rng.choice(WORDS)}."
            run = memcli(clone, "add", text, "--json")
            if run.returncode != 0:
                log["refused"].append(f"add {text!r}: {run.stderr.strip()[-300:]}")
            elif not json.loads(run.stdout).get("added", True):  # every text is new
                log["refused"].append(f"add {text!r} said it was there: {run.stdout.strip()}")
            else:
                log["added"].append({"text": text, "id": _id(text)})
        n += 1
        time.sleep(rng.uniform(0, 0.3))
    out.write_text(json.dumps(log))


WORDS = (
    "cache deploy queue index schema token lease shard replica backup cron webhook budget"
    " latency retry quota mirror ledger gateway"
).split()


def _id(text: str) -> str:
    from memcli.notes.entryparse import entry_id

    return entry_id(text)


def parse_entries(text: str) -> list[Any]:
    from memcli.notes.entries import parse_entries as parse

    return parse(text)


# -- the checks -------------------------------------------------------------------------------
def settle(clones: list[Path], max_rounds: int = 10) -> list[str]:
    """Sync every clone in turn until a round changes nothing; the errors of the last round."""
    errors: list[str] = []
    for _ in range(max_rounds):
        moved, errors = 0, []
        for clone in clones:
            run = memcli(clone, "sync", "--json")
            if run.returncode != 0:
                errors.append(f"{clone.name}: {run.stderr.strip()[-300:]}")
                continue
            data = json.loads(run.stdout)
            moved += int(data.get("pulled", 0)) + int(data.get("pushed", 0))
            moved += 1 if data.get("committed") else 0
        if not moved and not errors:
            break
    return errors


def memory_files(clone: Path) -> dict[str, bytes]:
    return {
        p.relative_to(clone).as_posix(): p.read_bytes()
        for p in sorted((clone / "memory").rglob("*.md"))
    }


def check(clones: list[Path], logs: list[dict[str, Any]], errors: list[str]) -> list[str]:
    """Every problem found (none: all checks hold)."""
    problems = [f"sync still failing: {e}" for e in errors]
    problems += [f"refused: {r}" for log in logs for r in log.get("refused", [])]
    files = [memory_files(c) for c in clones]
    for clone, got in zip(clones[1:], files[1:], strict=True):
        if got != files[0]:
            problems.append(f"{clone.name} differs from {clones[0].name}")
    text = "\n".join(b.decode("utf-8", "replace") for b in files[0].values())
    if MARKERS.search(text):
        problems.append("conflict markers in memory files")
    lines = text.splitlines()
    statuses: dict[str, list[str]] = {}  # a fact's text -> the status lines under it
    for data in files[0].values():
        for entry in parse_entries(data.decode("utf-8", "replace")):
            statuses.setdefault(entry.text, []).extend(entry.status)
    successors = {_id(c["new"]) for log in logs for c in log["superseded"]}
    for stray in set(re.findall(r"^\s+- superseded [\d-]+ by ([0-9a-f]+)\b", text, re.M)):
        if stray not in successors:  # a mark no supersede that exited 0 wrote
            problems.append(f"a 'superseded by {stray}' line no supersede reported")
    for log in logs:
        for fact in log["added"]:
            count = sum(1 for ln in lines if ln.rstrip().endswith(fact["text"]))
            if count != 1:
                problems.append(f"{fact['text']!r} is there {count} times")
        for change in log["superseded"]:
            new_id = _id(change["new"])
            marks = len(re.findall(rf"^\s+- superseded [\d-]+ by {new_id}\b", text, re.M))
            under = [
                s for s in statuses.get(change["old"], []) if re.search(rf"\bby {new_id}\b", s)
            ]
            if marks != 1 or len(under) != 1:
                problems.append(
                    f"{change['old_id']} -> {new_id}: {marks} marks, {len(under)} under the fact"
                )
    return problems


def run_fleet(n: int, seconds: float) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix=f"fleet{n}-"))
    try:
        clones = setup(base, n)
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        procs = []
        for i, clone in enumerate(clones):
            out = base / f"log{i}.json"
            procs.append(
                (
                    subprocess.Popen(
                        [sys.executable, __file__, "--worker", str(clone), str(seconds)]
                        + [str(1000 + i), str(out)]
                    ),
                    out,
                )
            )
        loads = []
        while any(proc.poll() is None for proc, _ in procs):
            loads.append(os.getloadavg()[0])
            time.sleep(min(5.0, max(0.5, seconds / 20)))
        elapsed = time.perf_counter() - t0
        load = os.getloadavg()[0]
        logs = [json.loads(out.read_text()) for _, out in procs]
        errors = settle(clones)
        problems = check(clones, logs, errors)
        syncs = [s for log in logs for s in log["syncs"]]
        ok_syncs = [s for s in syncs if s["exit"] == 0]
        times = sorted(s["seconds"] for s in ok_syncs) or [0.0]
        adds = sum(len(log["added"]) for log in logs)
        return {
            "clones": n,
            "seconds": round(elapsed, 1),
            "facts": adds,
            "facts_per_s": round(adds / elapsed, 2),
            "superseded": sum(len(log["superseded"]) for log in logs),
            "syncs": len(syncs),
            "sync_failed_then_retried": len(syncs) - len(ok_syncs),
            "sync_p50_s": round(statistics.median(times), 2),
            "sync_p95_s": round(times[min(len(times) - 1, int(0.95 * len(times)))], 2),
            "rounds_beyond_first": round(
                sum(max(0, s["attempts"] - 1) for s in ok_syncs) / max(1, len(ok_syncs)), 2
            ),
            "load_before": round(load_before, 2),
            "load_after": round(load, 2),
            "load_mean": round(statistics.mean(loads or [load]), 2),
            "problems": problems,
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| clones | seconds | facts saved | facts/s | superseded | syncs | failed, retried"
        " | sync p50 | sync p95 | extra rounds/sync | problems | load (1 min) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['clones']} | {r['seconds']} | {r['facts']} | {r['facts_per_s']}"
            f" | {r['superseded']} | {r['syncs']} | {r['sync_failed_then_retried']}"
            f" | {r['sync_p50_s']} s | {r['sync_p95_s']} s | {r['rounds_beyond_first']}"
            f" | {len(r['problems'])} | {r['load_before']} -> {r['load_after']}"
            f" (mean {r['load_mean']}) |"
        )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--worker":
        worker(Path(args[1]), float(args[2]), int(args[3]), Path(args[4]))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clones", default="2,4,8", help="clone counts, comma-separated")
    p.add_argument("--seconds", type=float, default=300.0, help="how long the agents run")
    p.add_argument("--quick", action="store_true", help="2 and 4 clones for 20 s")
    p.add_argument("--write-results", action="store_true", help="update benchmarks/RESULTS.md")
    opts = p.parse_args(args)
    counts = [2, 4] if opts.quick else [int(c) for c in opts.clones.split(",")]
    seconds = 20.0 if opts.quick else opts.seconds
    rows = []
    for n in counts:
        print(f"fleet: {n} clones for {seconds:g} s ...", flush=True)
        row = run_fleet(n, seconds)
        rows.append(row)
        for problem in row["problems"][:20]:
            print(f"  PROBLEM: {problem}")
    report = table(rows)
    print(report)
    if opts.write_results:
        from benchmarks.sections import write_section

        stamp = time.strftime("%Y-%m-%d")
        write_section(
            "fleet",
            f"### Fleet: clones adding, superseding and syncing at once ({stamp})\n\n"
            f"`python benchmarks/fleet_bench.py --clones {opts.clones} --seconds {seconds:g}`"
            " (2 cores; the load average is the machine's, this run included)\n\n" + report,
        )
    return 1 if any(r["problems"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
