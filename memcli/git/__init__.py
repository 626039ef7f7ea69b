"""Git: the history of the memory, run through the ``git`` executable (see :mod:`.repo`).

``repo`` (finding the repository, running git), ``status`` (the cheap state for
``memcli status``), ``commit`` (committing paths, commit messages), ``scope`` (the memory
folder's history seen from a workspace), ``diff`` (facts added and removed), ``log``,
``sync`` (sharing through the upstream) and ``hooks`` (re-indexing after git changes files).
"""
