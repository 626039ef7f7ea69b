"""The CI guard of memcli's hot paths: CPU instructions (callgrind, :mod:`grind`) of each,
against the baselines committed in ``benchmarks/bench_baseline.json``.

Usage::

    python benchmarks/bench_guard.py [--memcli PATH] [--update] [--files N] [--only NAME]...

Counted, each a whole process as a caller starts it (no engine running):

* ``index (N files, cold)``: ``memcli -q index`` of the generated corpus
  (:mod:`corpus`) with no ``.memcli/``; the parsing child is counted too;
* ``search --json (N files)``: one keyword search of that index;
* ``--help``;
* ``agent hook prompt``: the UserPromptSubmit hook with its payload on stdin, in a workspace
  of a few facts (the case an agent pays on every prompt);
* ``agent hook file``: the PostToolUse hook of a file the agent read, in that workspace, a
  fact naming the file;
* ``mcp initialize``: ``memcli mcp`` answering an ``initialize`` request (stdin is closed
  once the answer is read, and the server exits).

Instructions miss what costs time without work, and per-file work small beside the rest,
so each path also runs once under a probe (``guard_probe/sitecustomize.py``) that counts the
SQL statements it runs and the milliseconds it sleeps: an extra query per file or a
``time.sleep`` shows there exactly.

A count over its tolerance (instructions: 15%; SQL statements: 0.5% and 2 more; sleep: 20 ms
more) fails the guard, unless the commit checked out (HEAD) raised that baseline itself and
says why in its message, on a line ``bench-guard: <reason>``; a commit that raises a
baseline beyond the tolerance without such a line fails too. So a change that makes a hot
path slower says so on purpose: run with ``--update``, commit the new baseline with the
reason. Counts are those of this machine's
Python, SQLite and libraries; the baseline records them, and a mismatch is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"
BASELINE = HERE / "bench_baseline.json"
PROBE = HERE / "guard_probe"
sys.path.insert(0, str(HERE))

import corpus as corpus_mod  # noqa: E402
from grind import collected, grind_cmd, instructions  # noqa: E402

#: How much a count may grow over its baseline before the guard fails: instructions (a
#: share), SQL statements (a share and a few), milliseconds slept (an amount).
TOLERANCE = 0.15
STATEMENT_TOLERANCE, STATEMENT_SLACK = 0.005, 2
SLEEP_SLACK_MS = 20.0
#: The names of the probes' counts: "<path>: SQL statements", "<path>: ms slept".
STATEMENTS, SLEPT = ": SQL statements", ": ms slept"
#: The commit message line that explains a raised baseline.
REASON_PREFIX = "bench-guard:"
FACTS = [
    "Use Valkey instead of Redis for the session cache.",
    "Deploys go through the staging cluster first, then production.",
    "The API rate limit is 100 requests per minute per token.",
    "Rollbacks use the previous container image tag.",
    "The nightly export in `jobs/export.py` must stay idempotent.",
]
#: The code file of the small workspace, which the last fact names.
CODE_FILE = "jobs/export.py"
PROMPT = "which cache do we use for the session store?"
QUERY = "deploy rollback token"


def default_memcli() -> str:
    """memcli of this checkout as a regular (not editable) install would run it, with this
    venv's dependencies (:func:`perf.installed_python`): an editable install's import hook
    would be counted on every import."""
    from perf import installed_python

    return str(Path(installed_python(ROOT)).parent / "memcli")


def child_env(tmp: Path) -> dict[str, str]:
    """Settings, caches and the engine's folder of this run only: nothing of the user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    for name in ("cache", "config", "runtime"):
        (tmp / name).mkdir(mode=0o700)
    env.update(
        MEMCLI_CACHE_DIR=str(tmp / "cache"),
        MEMCLI_CONFIG_DIR=str(tmp / "config"),
        MEMCLI_RUNTIME_DIR=str(tmp / "runtime"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_COLOR="1",
    )
    return env


def small_workspace(exe: str, ws: Path, env: dict[str, str]) -> None:
    """A workspace of a few facts, indexed, in a git repository whose one code file
    (:data:`CODE_FILE`) a fact names."""
    out = subprocess.DEVNULL
    (ws / CODE_FILE).parent.mkdir(parents=True)
    (ws / CODE_FILE).write_text("def export(): ...\n")
    git = ["git", "-C", str(ws), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git[:3], "init", "-q"], env=env, check=True)
    subprocess.run([*git, "add", "-A"], env=env, check=True)
    subprocess.run([*git, "commit", "-qm", "code"], env=env, check=True)
    subprocess.run([exe, "-w", str(ws), "init"], env=env, stdout=out, check=True)
    for fact in FACTS:
        add = [exe, "-w", str(ws), "add", "--type", "decision", fact]
        subprocess.run(add, env=env, stdout=out, check=True)


def file_payload(ws: Path, session: str, path: str = CODE_FILE) -> bytes:
    """What Claude Code's PostToolUse hook gets when the agent reads ``path`` in ``ws``."""
    payload = {
        "session_id": session,
        "cwd": str(ws),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(ws / path)},
    }
    return json.dumps(payload).encode()


def mcp_initialize(exe: str, ws: Path, env: dict[str, str]) -> int:
    """Instructions of ``memcli mcp`` from its start to its exit, given one ``initialize``
    request, its stdin closed once it answered."""
    cmd = [exe, "-w", str(ws), "mcp"]
    return collected(mcp_exchange(grind_cmd(cmd), {**env, "PYTHONHASHSEED": "0"}), cmd)


def mcp_exchange(cmd: list[str], env: dict[str, str]) -> str:
    """Run ``cmd`` (``memcli mcp``, maybe under valgrind) through one ``initialize`` request
    and its answer, then close its stdin; its stderr."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench-guard", "version": "1"},
        },
    }
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
        proc.stdin.close()
        proc.wait(timeout=300)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if b'"result"' not in answer:
        raise SystemExit(f"memcli mcp did not answer initialize: {answer[:300]!r} {stderr[-300:]}")
    return stderr


def probed(cmd: list[str], env: dict[str, str], stdin: bytes | None = None) -> dict[str, float]:
    """SQL statements run and milliseconds slept by one run of ``cmd`` and its children
    (``guard_probe/sitecustomize.py``); ``memcli mcp`` goes through one ``initialize``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "probe.jsonl")
        penv = {
            **env,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(PROBE), env.get("PYTHONPATH")])),
            "BENCH_GUARD_PROBE": str(out),
        }
        if cmd[-1] == "mcp":
            mcp_exchange(cmd, penv)
        else:
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
            subprocess.run(cmd, input=stdin, env=penv, check=True, **quiet)
        records = (
            [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        )
    if not any("statements" in r for r in records):
        raise SystemExit(f"bench-guard: the probe did not load in {' '.join(cmd)}")
    return {
        "statements": sum(r.get("statements", 0) for r in records),
        "slept_ms": round(sum(r.get("slept_ms", 0.0) for r in records), 1),
    }


def measure(exe: str, files: int, only: set[str] | None, jobs: int = 2) -> dict[str, float]:
    """Instructions of each guarded path (those named in ``only``, else all), counted by
    ``jobs`` valgrind processes at a time."""
    corpus_dir = WORK / f"corpus-{files}"
    corpus_mod.generate(corpus_dir, files, quiet=True)
    # the bytecode of the checkout, as an install writes it (PYTHONDONTWRITEBYTECODE may be set:
    # a module compiled on every run would be counted so)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "memcli")], check=True)
    tmp = Path(tempfile.mkdtemp(prefix="memcli-guard-"))
    counts: dict[str, float] = {}
    try:
        env = child_env(tmp)
        big, small = tmp / "big", tmp / "small"
        shutil.copytree(corpus_dir / "memory", big / "memory")
        small_workspace(exe, small, env)
        payload = json.dumps(
            {
                "session_id": "bench-guard",
                "transcript_path": str(small / "transcript.jsonl"),
                "cwd": str(small),
                "hook_event_name": "UserPromptSubmit",
                "prompt": PROMPT,
            }
        ).encode()
        index_name, search_name = f"index ({files} files, cold)", f"search --json ({files} files)"
        commands: dict[str, tuple[list[str], bytes | None]] = {
            index_name: ([exe, "-w", str(big), "-q", "index"], None),
            search_name: ([exe, "-w", str(big), "search", "--json", QUERY], None),
            "--help": ([exe, "--help"], None),
            "agent hook prompt": ([exe, "-w", str(small), "agent", "hook", "prompt"], payload),
            "agent hook file": (
                [exe, "-w", str(small), "agent", "hook", "file"],
                file_payload(small, "bench-guard"),
            ),
            "mcp initialize": ([exe, "-w", str(small), "mcp"], None),
        }
        # two queues that run side by side (counts do not depend on the load): the corpus's
        # cold index, then its search; the start-up paths
        queues: list[list[tuple[str, Callable[[], int]]]] = [
            [
                (index_name, lambda: instructions(commands[index_name][0], env, warm_up=False)),
                (search_name, lambda: instructions(commands[search_name][0], env)),
            ],
            [
                ("--help", lambda: instructions(commands["--help"][0], env)),
                (
                    "agent hook prompt",
                    lambda: instructions(commands["agent hook prompt"][0], env, payload),
                ),
                (
                    "agent hook file",
                    lambda: instructions(
                        commands["agent hook file"][0], env, commands["agent hook file"][1]
                    ),
                ),
                ("mcp initialize", lambda: mcp_initialize(exe, small, env)),
            ],
        ]
        # a first index writes the bytecode of every module the count will load, and an
        # index for the searches when the cold one is not counted
        subprocess.run(commands[index_name][0], env=env, check=True)
        if only is None or index_name in only:
            shutil.rmtree(big / ".memcli")

        def run_queue(queue: list[tuple[str, Callable[[], int]]]) -> None:
            for name, run in queue:
                if only is not None and name not in only:
                    continue
                start = time.monotonic()
                counts[name] = run()
                took = time.monotonic() - start
                print(f"  {name}: {counts[name]:,} ({took:.0f} s)", file=sys.stderr)

        with ThreadPoolExecutor(jobs) as pool:
            for done in [pool.submit(run_queue, queue) for queue in queues]:
                done.result()
        # what instructions miss: a sleep, an extra statement per file (a few thousand
        # instructions each); one run each, the cold index first again
        for name, (cmd, stdin) in commands.items():
            if only is not None and name not in only:
                continue
            if name == index_name:
                shutil.rmtree(big / ".memcli", ignore_errors=True)
            found = probed(cmd, env, stdin)
            counts[name + STATEMENTS] = int(found["statements"])
            counts[name + SLEPT] = found["slept_ms"]
            print(
                f"  {name}: {found['statements']:,} SQL statements, slept {found['slept_ms']} ms",
                file=sys.stderr,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return counts


def machine() -> dict[str, str]:
    """What the counts depend on besides memcli."""
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "valgrind": valgrind.strip(),
    }


def git(*args: str) -> str | None:
    r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def limit(name: str, base: float) -> float:
    """The most a count called ``name`` may reach over its baseline ``base``."""
    if name.endswith(STATEMENTS):
        return base * (1 + STATEMENT_TOLERANCE) + STATEMENT_SLACK
    if name.endswith(SLEPT):
        return base + SLEEP_SLACK_MS
    return base * (1 + TOLERANCE)


def raised(before: dict[str, float], after: dict[str, float]) -> list[str]:
    """The counts that ``after`` (a baseline) raised over ``before`` by more than their
    tolerance."""
    return [n for n, c in after.items() if n in before and c > limit(n, before[n])]


def reason_in(message: str) -> str | None:
    """The reason a commit message gives on its ``bench-guard:`` lines, if any."""
    reasons = [
        line.strip()[len(REASON_PREFIX) :].strip()
        for line in message.splitlines()
        if line.strip().startswith(REASON_PREFIX)
    ]
    return "; ".join(r for r in reasons if r) or None


def head_change() -> tuple[dict[str, float], str]:
    """(the baseline's counts before HEAD, HEAD's message); ({}, "") without a parent."""
    before_text = git("show", f"HEAD~1:{BASELINE.relative_to(ROOT)}")
    if before_text is None:
        return {}, ""
    before: dict[str, float] = json.loads(before_text).get("counts", {})
    return before, git("log", "-1", "--format=%B", "HEAD") or ""


def compare(
    counts: dict[str, float], base: dict[str, float], before: dict[str, float], message: str
) -> list[str]:
    """The failures of ``counts`` against the baseline ``base``, which HEAD changed from
    ``before`` with ``message`` (none: the guard passes)."""
    failures = []
    for name, count in counts.items():
        if name not in base:
            print(f"{name}: {count:,} (no baseline)")
            continue
        verdict = "ok"
        if count > limit(name, base[name]):
            verdict = "FAIL"
            growth = f"{100 * (count / base[name] - 1):.1f}%" if base[name] else f"{count:,}"
            failures.append(f"{name} grew {growth} over its baseline ({base[name]:,})")
        ratio = f"{count / base[name]:.3f}x" if base[name] else f"+{count - base[name]:,}"
        print(f"{name}: {count:,} vs {base[name]:,} ({ratio}) {verdict}")
    reason = reason_in(message)
    for name in raised(before, base):
        if reason is None:
            failures.append(
                f"HEAD raised the baseline of {name} beyond its tolerance"
                f" without a '{REASON_PREFIX} <reason>' line in its message"
            )
        else:
            print(f"{name}: baseline raised by HEAD ({REASON_PREFIX} {reason})")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memcli", help="the memcli to measure (default: this checkout's)")
    ap.add_argument("--update", action="store_true", help="write the counts as the baseline")
    ap.add_argument("--files", type=int, help="corpus size (default: the baseline's)")
    ap.add_argument("--only", action="append", help="the name of a path to count (repeat for more)")
    ap.add_argument("--jobs", type=int, default=2, help="valgrind processes at a time")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("bench-guard: valgrind is not installed", file=sys.stderr)
        return 2
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    files = args.files or int(baseline.get("files", 1000))
    only = set(args.only) if args.only else None
    start = time.monotonic()
    counts = measure(args.memcli or default_memcli(), files, only, max(1, args.jobs))
    print(f"bench-guard: counted in {time.monotonic() - start:.0f} s", file=sys.stderr)
    env = machine()
    if args.update:
        kept = baseline.get("counts", {}) if only is not None else {}
        baseline = {"files": files, "machine": env, "counts": {**kept, **counts}}
        BASELINE.write_text(json.dumps(baseline, indent=1) + "\n")
        print(f"bench-guard: wrote {BASELINE.relative_to(ROOT)}")
        return 0
    if baseline.get("machine") not in (None, env):
        print(f"bench-guard: note: baseline counted on {baseline['machine']}, here {env}")
    failures = compare(counts, baseline.get("counts", {}), *head_change())
    for failure in failures:
        print(f"bench-guard: FAIL: {failure}", file=sys.stderr)
    if failures:
        print(
            "bench-guard: if the slowdown is on purpose, run `python benchmarks/bench_guard.py"
            f" --update` and commit the baseline with a line '{REASON_PREFIX} <reason>'",
            file=sys.stderr,
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
