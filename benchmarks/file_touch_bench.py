"""File-touch recall over a small real git repository with a memory: hit rate, noise, latency.

Usage::

    python benchmarks/file_touch_bench.py [--files 40] [--commits 200] [--runs 3]

A repository of ``--files`` code files in eight folders gets ``--commits`` dated commits (one
file changed in each) and a memory of 30 facts over three day files: 15 name a file or a
folder of the repository (some of those files changed after the fact: "may be stale"), 15 name
none. Every file is then touched as Claude Code does it (``memcli agent hook file``, a process,
a PostToolUse payload of Read, each touch its own session): a touch of a file with linked facts
is a hit when the context quotes one of them; a touch of any other file is noise when it gets
any context. Printed: hit rate, noise, stale marks seen, the hook's whole-process time (median,
p90) beside ``python -c pass``, and the index-time cost: ``memcli index`` in all and the links
step alone (resolving the names and the one ``git log``), with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_guard import file_payload

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ["jobs", "payments", "api", "web", "auth", "search", "billing", "infra"]
UNRELATED = [
    "The team standup is at 09:30 on weekdays.",
    "Use British spelling in the user-facing copy.",
    "The staging database is reset every Monday night.",
    "Alice owns the release notes for each sprint.",
    "Design reviews need two approvals before merging.",
    "On-call rotates weekly on Tuesdays.",
    "The office Wi-Fi drops at 18:00 for backups.",
    "Customer names are never logged in plain text.",
    "We pin the Python minor version in production.",
    "Incidents get a written review within five days.",
    "Feature flags are removed two sprints after launch.",
    "The design system lives in the shared Figma project.",
    "Support tickets tagged urgent page the on-call engineer.",
    "Quarterly planning happens in the first week of the quarter.",
    "Vendor contracts are stored in the legal drive.",
]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCLI_", "GIT_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        MEMCLI_CONFIG_DIR=str(home / "config"),
        MEMCLI_CACHE_DIR=str(home / "cache"),
        MEMCLI_RUNTIME_DIR=str(home / "run"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@memcli.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@memcli.invalid",
        TZ="UTC",
    )
    return env


def _git(root: Path, env: dict[str, str], *args: str, when: str | None = None) -> None:
    if when is not None:
        env = dict(env, GIT_AUTHOR_DATE=f"{when} +0000", GIT_COMMITTER_DATE=f"{when} +0000")
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def build(root: Path, env: dict[str, str], files: int, commits: int) -> dict[str, str]:
    """The repository and its memory; each file with linked facts -> a phrase of its fact."""
    memcli = [sys.executable, "-m", "memcli", "-q", "-w", str(root)]
    root.mkdir()
    subprocess.run([*memcli, "init"], env=env, check=True, capture_output=True)
    _git(root, env, "init", "-q", "-b", "main")
    paths = [f"{FOLDERS[i % len(FOLDERS)]}/mod_{i}.py" for i in range(files)]
    for p in paths:
        (root / p).parent.mkdir(exist_ok=True)
        (root / p).write_text(f"# {p}\n")
    _git(root, env, "add", "-A")
    _git(root, env, "commit", "-qm", "start", when="2026-10-01T09:00:00")
    expected: dict[str, str] = {}
    linked = []
    for n in range(12):  # facts naming a file
        path = paths[(n * 3) % files]
        phrase = f"rule number {n} for this module"
        linked.append(f"- 10:{n:02d} [decision] `{path}` keeps {phrase}.")
        expected[path] = phrase
    for n, folder in enumerate(FOLDERS[:3]):  # facts naming a folder (all its files)
        phrase = f"the {folder} folder convention"
        linked.append(f"- 11:{n:02d} [constraint] Code under {folder}/ follows {phrase}.")
        for p in paths:
            if p.startswith(folder + "/"):
                expected.setdefault(p, phrase)
    days = ["2026-11-10", "2026-11-11", "2026-11-12"]
    for d, day in enumerate(days):
        lines = linked[d::3] + [f"- 12:{i:02d} {t}" for i, t in enumerate(UNRELATED[d::3])]
        (root / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n")
    _git(root, env, "add", "-A")
    _git(root, env, "commit", "-qm", "memory", when="2026-11-12T18:00:00")
    start = time.mktime(time.strptime("2026-10-02", "%Y-%m-%d"))
    for c in range(commits):  # one file a commit, spread over two months
        path = paths[(c * 7) % files]
        with open(root / path, "a") as f:
            f.write(f"x = {c}\n")
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start + c * 5_000_000 / commits))
        _git(root, env, "commit", "-qam", f"change {c}", when=when)
    return expected


def run_hook(root: Path, env: dict[str, str], path: str, session: str) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "memcli", "agent", "hook", "file"]
    start = time.perf_counter()
    out = subprocess.run(
        cmd, input=file_payload(root, session, path), cwd=root, env=env, capture_output=True
    )
    seconds = time.perf_counter() - start
    if not out.stdout.strip():
        return seconds, ""
    return seconds, str(json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"])


def prompt_hook(root: Path, env: dict[str, str], session: str) -> float:
    """Whole-process seconds of the prompt hook on a prompt about memory, for comparison."""
    payload = {"session_id": session, "cwd": str(root), "prompt": "when is the team standup?"}
    cmd = [sys.executable, "-m", "memcli", "agent", "hook", "prompt"]
    start = time.perf_counter()
    subprocess.run(cmd, input=json.dumps(payload).encode(), cwd=root, env=env, capture_output=True)
    return time.perf_counter() - start


def links_step(root: Path, runs: int) -> tuple[float, int]:
    """Median seconds of the links step (:func:`memcli.git.changes.refresh_links`) and how
    many names resolved."""
    from memcli.git.changes import refresh_links
    from memcli.memory import Memory

    times = []
    resolved = 0
    with Memory.open(root) as mem:
        for _ in range(runs):
            start = time.perf_counter()
            with mem.store.transaction():
                resolved = refresh_links(mem.store, root)
            times.append(time.perf_counter() - start)
    return statistics.median(times), resolved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3, help="touches of each file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = _env(home)
        os.environ.update({k: v for k, v in env.items() if k.startswith(("MEMCLI_", "XDG_"))})
        os.environ["TZ"] = "UTC"
        time.tzset()
        root = Path(tmp) / "repo"
        expected = build(root, env, args.files, args.commits)
        before = os.getloadavg()
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "memcli", "-q", "-w", str(root), "index", "--force"],
            env=env,
            check=True,
            capture_output=True,
        )
        index_s = time.perf_counter() - start
        step_s, resolved = links_step(root, 5)
        files = sorted(
            p.relative_to(root).as_posix()
            for p in root.rglob("*.py")
            if ".memcli" not in p.parts and ".git" not in p.parts
        )
        hits = noise = stale = 0
        times: list[float] = []
        for run in range(args.runs):
            for path in files:
                seconds, text = run_hook(root, env, path, f"bench-{run}-{path.replace('/', '-')}")
                times.append(seconds)
                if path in expected:
                    hits += run == 0 and expected[path] in text
                    stale += run == 0 and "may be stale" in text
                else:
                    noise += run == 0 and bool(text)
        prompts = sorted(prompt_hook(root, env, f"bench-prompt-{n}") for n in range(11))
        bare = []
        for _ in range(11):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env)
            bare.append(time.perf_counter() - start)
        times.sort()
        linked, other = len(expected), len(files) - len(expected)
        print(f"repository: {len(files)} files, {args.commits} commits; 30 facts, 15 linked")
        print(f"hit rate: {hits}/{linked} touched files with linked facts got one of them")
        print(f"noise: {noise}/{other} touched files without linked facts got context")
        print(f"stale marks among the hits: {stale}")
        print(
            f"hook process: median {statistics.median(times) * 1000:.1f} ms,"
            f" p90 {times[int(0.9 * (len(times) - 1))] * 1000:.1f} ms over {len(times)} touches;"
            f" prompt hook {statistics.median(prompts) * 1000:.1f} ms;"
            f" python -c pass {statistics.median(bare) * 1000:.1f} ms"
        )
        print(
            f"index --force: {index_s * 1000:.0f} ms;"
            f" links step ({resolved} names resolved, one git log): {step_s * 1000:.1f} ms"
        )
        print("load: " + " ".join(f"{x:.2f}" for x in (*before, *os.getloadavg())))


if __name__ == "__main__":
    main()
