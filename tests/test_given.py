"""The per-session record of what recall and the file hook gave an agent session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memcli.flush.given import Given, given_folder


def test_hooks_of_one_session_keep_what_each_recorded(workspace: Path) -> None:
    """Two hooks of a session read the record, then each records what it gave: the record
    holds both, so neither entry is given again."""
    folder = given_folder(workspace)
    first, second = Given(folder, "s1"), Given(folder, "s1")
    assert not first.has("- 10:00 one fact") and not second.has("- 10:01 another fact")
    first.add(["- 10:00 one fact"])
    second.add(["- 10:01 another fact"])
    again = Given(folder, "s1")
    assert again.has("- 10:00 one fact") and again.has("- 10:01 another fact")


def test_hooks_in_parallel_lose_no_record(workspace: Path) -> None:
    """Eight processes record an entry each into one session's record at once."""
    folder = given_folder(workspace)
    code = (
        "import sys; from pathlib import Path; from memcli.flush.given import Given\n"
        "g = Given(Path(sys.argv[1]), 's2'); g.has('x'); g.add([sys.argv[2]])\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(folder), f"- 10:0{i} fact {i}"])
        for i in range(8)
    ]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    record = Given(folder, "s2")
    assert all(record.has(f"- 10:0{i} fact {i}") for i in range(8))
