"""Keeping the index in step while files change (``memcli watch``).

File-system events come from watchfiles (a notify thread inside the process: no child
processes). Events are filtered (:mod:`.filtering`: ``.memcli/``, ``.git/``, files the include
globs or ``.memignore`` leave out) and coalesced (:mod:`.loop`) until the files have been quiet
for ``watch.debounce_ms`` (a steady stream is still synced every ``max(2 s, 5 x debounce)``).
Each batch re-indexes just the changed paths (:mod:`.batch`, embedding new chunks when a model
is configured) under the writer lock, held for that batch only, in short transactions:
searches never wait (WAL) and ``memcli add`` waits at most one batch. One watcher runs per
workspace (:mod:`.locks`: ``.memcli/watch.lock``); signals ask it to stop (:mod:`.signals`);
:mod:`.session` runs one watch from start to ``stopped``.

The caller receives JSON-ready event dicts (:mod:`.events`) through ``emit``:
``ready``, ``sync``, ``warning``, ``error`` and ``stopped``.
"""
