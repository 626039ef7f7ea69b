"""``memcli config`` on an open workspace: the settings operations of
:mod:`memcli.config.operations` (which also work outside one) as functions over a workspace's
core, methods of ``Memory``. After a change the core's settings are read again (command-line
overrides kept) and the embedder is made again from them when next needed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcli.config import load_settings
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from memcli.config.operations import ConfigPaths, SettingChange, SettingEntry, SettingsListing
    from memcli.config.trust import TrustState


def config_list(core: MemoryCore) -> SettingsListing:
    from memcli.config import operations  # their result types load on a config call

    return operations.list_settings(core.ws)


def config_get(core: MemoryCore, key: str) -> SettingEntry:
    from memcli.config import operations  # their result types load on a config call

    return operations.get_setting(key, core.ws)


def config_set(core: MemoryCore, key: str, text: str, *, user: bool = False) -> SettingChange:
    from memcli.config import operations  # their result types load on a config call

    change = operations.set_setting(key, text, core.ws, user=user)
    _reload_settings(core)
    return change


def config_unset(core: MemoryCore, key: str, *, user: bool = False) -> SettingChange:
    from memcli.config import operations  # their result types load on a config call

    change = operations.unset_setting(key, core.ws, user=user)
    _reload_settings(core)
    return change


def config_paths(core: MemoryCore) -> ConfigPaths:
    from memcli.config import operations  # their result types load on a config call

    return operations.config_paths(core.ws)


def trust_state(core: MemoryCore) -> TrustState:
    """Whether this workspace's memcli.toml is trusted, and what it sets that needs it."""
    from memcli.config.trust import trust_state  # trust code on a trust call only

    return trust_state(core.ws.root)


def trust(core: MemoryCore) -> TrustState:
    """Trust this workspace's memcli.toml as it is now: the settings needing trust it sets
    (providers' models, hosts and key variables, the prompt file) apply from now on,
    until its content changes. Recorded by digest in the user config."""
    from memcli.config.trust import trust  # trust code on a trust call only

    state = trust(core.ws.root)
    _reload_settings(core, lenient=True)
    return state


def revoke_trust(core: MemoryCore) -> TrustState:
    """Forget the trust in this workspace's memcli.toml."""
    from memcli.config.trust import revoke  # trust code on a trust call only

    state = revoke(core.ws.root)
    _reload_settings(core, lenient=True)
    return state


def _reload_settings(core: MemoryCore, *, lenient: bool = False) -> None:
    """Read the settings again (``lenient``: a bad value leaves the one below it); the
    embedder is made again from them when next needed."""
    flags = {k: v for k, v, origin in core.settings.items() if origin == "flag"}
    core.settings = load_settings(core.ws.root, flags, problems=[] if lenient else None)
    core._embedder.close()
    core._embedder.settings = core.settings
