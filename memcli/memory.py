"""The library façade: one object per workspace that every adapter (CLI, fast path, hooks,
MCP server, engine) drives.

Each operation is a function of a module of :mod:`memcli.service` over the workspace's
:class:`~memcli.service.core.MemoryCore` (its files, settings, index and embedder);
:class:`Memory` is that core with every operation as a method, each bound here by name to
the function that does it, so the signature and the types are the function's own. What
crosses services is composed here, in the open (:meth:`Memory.sync`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import memcli.service.agent as agent_ops
import memcli.service.doctor as doctor_ops
import memcli.service.filecontext as filecontext
import memcli.service.flush as flushing
import memcli.service.git as gitops
import memcli.service.indexing as indexing
import memcli.service.lifecycle as lifecycle
import memcli.service.notes as notes
import memcli.service.searching as searching
import memcli.service.session_flush as session_flush
import memcli.service.settings as settings_ops
import memcli.service.setup as setup
import memcli.service.watch as watching
from memcli.service.core import SEARCH_EMBED_LIMIT, MemoryCore
from memcli.service.notes import parse_get_spec

if TYPE_CHECKING:
    from memcli.service.datatypes import SyncOptions, SyncReport

__all__ = [
    "SEARCH_EMBED_LIMIT",
    "Memory",
    "parse_get_spec",
]


class Memory(MemoryCore):
    """A workspace with its settings and (lazily) its index: every memcli operation."""

    # -- a workspace made, and checked (no Memory needed: static) ---------------------------
    init = staticmethod(setup.init)
    doctor = staticmethod(doctor_ops.doctor)

    # -- notes: add, get, the files ---------------------------------------------------------
    add = notes.add
    get = notes.get
    files = notes.files
    target_path = notes.target_path

    # -- the index --------------------------------------------------------------------------
    index = indexing.index
    refresh_links = indexing.refresh_links
    scrub = indexing.scrub
    sync_before_search = indexing.sync_before_search
    status = indexing.status

    # -- search -----------------------------------------------------------------------------
    search = searching.search
    search_options = searching.search_options
    context = searching.context
    search_batch = searching.search_batch

    # -- git --------------------------------------------------------------------------------
    require_repo = gitops.require_repo
    commit = gitops.commit
    diff = gitops.diff
    log = gitops.log
    hooks_install = gitops.hooks_install
    hooks_uninstall = gitops.hooks_uninstall
    hooks_status = gitops.hooks_status

    def sync(self, opts: SyncOptions | None = None) -> SyncReport:
        """Finish a supersede a killed process left half done (a sync never commits and
        pushes half of one), then commit pending memory, pull, push and re-index."""
        lifecycle.finish_left_pending(self)
        return gitops.sync(self, opts)

    # -- a fact's life ----------------------------------------------------------------------
    find_fact = lifecycle.find_fact
    supersede = lifecycle.supersede
    forget = lifecycle.forget
    confirm = lifecycle.confirm
    review = lifecycle.review

    # -- flush, and the agents' sessions ----------------------------------------------------
    flush = flushing.flush
    flush_session = session_flush.flush_session
    import_sessions = session_flush.import_sessions
    sessions_due = session_flush.sessions_due

    # -- what the agents' hooks ask, and their set-up ---------------------------------------
    briefing = agent_ops.briefing
    recall = agent_ops.recall
    forget_given = agent_ops.forget_given
    recall_min_similarity = agent_ops.recall_min_similarity
    file_context = filecontext.file_context
    touched_blocks = filecontext.touched_blocks
    touched_context = filecontext.touched_context
    agent_install = agent_ops.agent_install
    agent_status = agent_ops.agent_status
    session_flushing = agent_ops.session_flushing

    # -- watching ---------------------------------------------------------------------------
    watch = watching.watch

    # -- settings and trust -----------------------------------------------------------------
    config_list = settings_ops.config_list
    config_get = settings_ops.config_get
    config_set = settings_ops.config_set
    config_unset = settings_ops.config_unset
    config_paths = settings_ops.config_paths
    trust_state = settings_ops.trust_state
    trust = settings_ops.trust
    revoke_trust = settings_ops.revoke_trust
