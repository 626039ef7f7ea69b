"""Agent integration: whole-process hook times, a warm MCP server's search, and recall noise.

Usage::

    python benchmarks/agent_bench.py [--quick] [--runs N] [--locomo PATH]

On a workspace made of the LoCoMo dev conversations (one file per session, keyword search):

* ``memcli agent hook prompt`` and ``session-start``, whole process (spawn to exit), as an
  agent runs them: the payload on stdin, medians over ``--runs``, against two floors measured
  in the same run: ``python -c pass`` (the interpreter alone) and ``memcli search --json``
  (the same query through the CLI's fast path); peak RSS of the hook processes; both hooks
  again with the workspace's engine running (``memcli serve --detach``);
* ``memcli mcp`` from spawn to its answer to ``initialize``, whole process;
* ``search`` through ``memcli mcp`` with the MCP SDK's client over stdio: the median
  round trip of a call inside a warm server;
* recall noise: the share of LoCoMo questions whose prompt gets memories (score at least
  ``agent.recall_min_score``) and of unrelated coding prompts that get any.

The figures are printed as Markdown; the machine may be shared, say so next to them.
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
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402  (benchmarks/locomo.py: the corpus and its questions)

DEFAULT_LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo-dev.json"
MEMCLI = [sys.executable, "-m", "memcli"]
UNRELATED = [
    "Please fix the typo in the footer template",
    "Refactor the parser module to use a state machine",
    "Why does the build fail on CI?",
    "Add unit tests for the date helpers",
    "Rename the variable foo to something clearer",
    "Run the linter and fix what it reports",
    "Can you explain this stack trace?",
    "Make the login form accessible",
    "Update the dependencies to their latest versions",
    "Write a migration that adds an index on users.email",
    "Speed up the slow test in test_api.py",
    "Add a dark mode toggle to the settings page",
    "Convert this callback code to async/await",
    "Bump the version and write the changelog entry",
    "The function returns None instead of a list, find out why",
    "Implement pagination for the orders endpoint",
    "Delete the dead code in utils.py",
    "Add type hints to the config loader",
    "Create a Dockerfile for the worker service",
    "Document the public API in the README",
    "Fix the flaky websocket reconnect test",
    "Extract the email sending into its own class",
    "Check the memory leak in the image resizer",
    "Add retry with backoff to the HTTP client",
    "Port the bash deploy script to Python",
    "Split the 900 line component into smaller ones",
    "Make the CSV export stream instead of loading everything",
    "What does this regex match exactly?",
    "Set up pre-commit hooks for formatting",
    "Add a health check endpoint",
    "Translate the error messages to German",
    "Review my last commit for bugs",
    "Make the tables sortable by column",
    "Use a connection pool for the database",
    "Why is the query plan doing a full scan?",
    "Add logging around the payment webhook",
    "Generate a sitemap during the build",
    "Lower the bundle size of the frontend",
    "Write an integration test for the signup flow",
    "Replace moment.js with date-fns",
]


def build(root: Path, data: Path) -> list[str]:
    """The LoCoMo dev conversations as one workspace, indexed; returns the questions."""
    questions = locomo.write_combined(root, data)
    subprocess.run([*MEMCLI, "-q", "-w", str(root), "index"], check=True)
    return questions


def timed(cmd: list[str], stdin: str, cwd: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in KiB, stdout) of one whole process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stdin.encode())
    proc.stdin.close()
    out = proc.stdout.read()
    _, _, usage = os.wait4(proc.pid, 0)  # reaped here, with its resource usage
    proc.returncode = 0
    return time.perf_counter() - t0, int(usage.ru_maxrss), out.decode()


def whole_process(cmd: list[str], stdin: str, cwd: Path, runs: int) -> dict[str, Any]:
    times, peak, out = [], 0, ""
    timed(cmd, stdin, cwd)  # warm the page cache
    for _ in range(runs):
        s, rss, out = timed(cmd, stdin, cwd)
        times.append(s)
        peak = max(peak, rss)
    return {"median_ms": statistics.median(times) * 1000, "peak_rss_kib": peak, "out": out}


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "agent_bench", "version": "0"},
        },
    }
)


def mcp_initialize(root: Path, runs: int) -> dict[str, Any]:
    """Whole process: spawn ``memcli mcp`` to its answer to ``initialize`` (what a client
    waits for before it lists the tools), medians over ``runs``; peak RSS at its exit."""
    times, peak = [], 0
    for i in range(runs + 1):  # the first warms the page cache
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [*MEMCLI, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=root
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(INITIALIZE.encode() + b"\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
        elapsed = time.perf_counter() - t0
        assert b'"serverInfo"' in answer, answer
        proc.stdin.close()
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
        if i:
            times.append(elapsed)
            peak = max(peak, int(usage.ru_maxrss))
    return {"median_ms": statistics.median(times) * 1000, "peak_rss_kib": peak}


def mcp_search(root: Path, queries: list[str], runs: int) -> dict[str, float]:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memcli", "-w", str(root), "mcp"]
    )
    times: list[float] = []

    async def main() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    await s.call_tool("search", {"query": queries[0]})  # warm
                    for i in range(runs):
                        t0 = time.perf_counter()
                        res = await s.call_tool("search", {"query": queries[i % len(queries)]})
                        times.append(time.perf_counter() - t0)
                        assert not res.is_error

    anyio.run(main)
    return {
        "median_ms": statistics.median(times) * 1000,
        "p95_ms": sorted(times)[int(len(times) * 0.95)] * 1000,
    }


def recall_noise(root: Path, questions: list[str]) -> dict[str, float]:
    from memcli.memory import Memory

    with Memory.open(root) as mem:
        got = [mem.recall(q) is not None for q in questions]
        noise = [mem.recall(p) is not None for p in UNRELATED]
        threshold = float(mem.settings.get("agent.recall_min_score"))
    return {
        "threshold": threshold,
        "questions": len(got),
        "questions_recalled": sum(got) / len(got),
        "unrelated": len(noise),
        "unrelated_recalled": sum(noise) / len(noise),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="5 runs, 100 recall questions")
    p.add_argument("--runs", type=int, default=21, help="whole-process runs per figure")
    p.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    args = p.parse_args(argv)
    if not args.locomo.is_file():
        print(f"agent_bench: skipped ({args.locomo} not found)")
        return
    runs = 5 if args.quick else args.runs
    with tempfile.TemporaryDirectory(prefix="memcli-agent-bench-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        questions = build(root, args.locomo)
        files = sum(1 for _ in (root / "memory").rglob("*.md"))
        prompt = json.dumps({"cwd": str(root), "prompt": questions[0], "session_id": "bench"})
        start = json.dumps({"cwd": str(root), "source": "startup", "session_id": "bench"})
        floor = whole_process([sys.executable, "-c", "pass"], "", root, runs)
        search = whole_process([*MEMCLI, "search", "--json", questions[0]], "", root, runs)
        hook_prompt = whole_process([*MEMCLI, "agent", "hook", "prompt"], prompt, root, runs)
        hook_start = whole_process([*MEMCLI, "agent", "hook", "session-start"], start, root, runs)
        assert "additionalContext" in hook_prompt["out"], "the prompt hook recalled nothing"
        assert "additionalContext" in hook_start["out"], "the session-start hook said nothing"
        subprocess.run([*MEMCLI, "-q", "-w", str(root), "serve", "--detach"], check=True)
        try:
            engine_prompt = whole_process([*MEMCLI, "agent", "hook", "prompt"], prompt, root, runs)
            engine_start = whole_process(
                [*MEMCLI, "agent", "hook", "session-start"], start, root, runs
            )
            status = subprocess.run(
                [*MEMCLI, "-q", "-w", str(root), "serve", "--status", "--json"],
                capture_output=True,
                check=True,
            )
        finally:
            subprocess.run([*MEMCLI, "-q", "-w", str(root), "serve", "--stop"], check=True)
        answered = json.loads(status.stdout)["engine"]["requests"]
        assert answered == 2 * (runs + 1), f"the engine answered {answered} hooks, not all"
        assert engine_prompt["out"] == hook_prompt["out"], "the engine recalled otherwise"
        assert engine_start["out"] == hook_start["out"], "the engine briefed otherwise"
        mcp_start = mcp_initialize(root, runs)
        mcp = mcp_search(root, questions[:50], max(runs, 50))
        noise = recall_noise(root, questions[: 100 if args.quick else 400])

    print(f"\nAgent hooks on the LoCoMo dev corpus ({files} files, keyword), {runs} runs each:\n")
    print("| run | median | × python -c pass | × memcli search --json | peak RSS |")
    print("|---|---:|---:|---:|---:|")
    for name, fig in (
        ("python -c pass (floor)", floor),
        ("memcli search --json (same query)", search),
        ("memcli agent hook prompt", hook_prompt),
        ("memcli agent hook session-start", hook_start),
        ("memcli agent hook prompt, engine running", engine_prompt),
        ("memcli agent hook session-start, engine running", engine_start),
        ("memcli mcp: spawn to its initialize answer", mcp_start),
    ):
        ms = fig["median_ms"]
        print(
            f"| {name} | {ms:.0f} ms | {ms / floor['median_ms']:.1f}"
            f" | {ms / search['median_ms']:.2f} | {fig['peak_rss_kib'] / 1024:.0f} MiB |"
        )
    print(
        f"\nMCP search inside a warm server (SDK client over stdio, {max(runs, 50)} calls):"
        f" median {mcp['median_ms']:.1f} ms, p95 {mcp['p95_ms']:.1f} ms"
    )
    print(
        f"\nRecall at agent.recall_min_score {noise['threshold']}: memories for"
        f" {noise['questions_recalled']:.0%} of {noise['questions']} LoCoMo questions,"
        f" for {noise['unrelated_recalled']:.0%} of {noise['unrelated']} unrelated coding prompts"
    )


if __name__ == "__main__":
    main()
