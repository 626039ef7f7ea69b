"""Document frequencies a long-lived connection keeps between searches (the engine's): reused
while the index is as it was, forgotten once it changed, whoever wrote it."""

from __future__ import annotations

from pathlib import Path

from memcli.memory import Memory


def freqs_after_search(mem: Memory, query: str) -> dict[str, int]:
    mem.search(query, mem.search_options())
    return dict(mem.store.term_freqs())


def test_frequencies_are_kept_until_the_index_changes(workspace: Path) -> None:
    reader, writer = Memory.open(workspace), Memory.open(workspace)
    (workspace / "memory" / "a.md").write_text("- Valkey replaces Redis.\n")
    reader.index()
    assert freqs_after_search(reader, "valkey") == {"valkei": 1}
    kept = reader.store.term_freqs()
    assert reader.store.term_freqs() is kept and kept == {"valkei": 1}  # nothing changed
    writer.add("Valkey runs as a cluster of three nodes.")  # another connection writes
    assert reader.store.term_freqs() == {}
    (workspace / "memory" / "b.md").write_text("- Valkey persistence is off.\n")
    assert freqs_after_search(reader, "valkey") == {"valkei": 3}  # synced first: this one wrote
    reader.index(force=True)  # this connection writes
    assert reader.store.term_freqs() == {}
    reader.close()
    writer.close()
