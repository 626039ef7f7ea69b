"""``memcli config`` on an open workspace: the settings operations of
:mod:`memcli.config.operations` (which also work outside one) as methods of ``Memory``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcli.config import load_settings
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from memcli.config.operations import ConfigPaths, SettingChange, SettingEntry, SettingsListing
    from memcli.config.trust import TrustState


class SettingsService(MemoryCore):
    """``memcli config`` and ``memcli trust`` on this workspace. After a change,
    :attr:`settings` is read again (command-line overrides kept) and the embedder is made
    again from them when next needed."""

    def config_list(self) -> SettingsListing:
        from memcli.config import operations  # their result types load on a config call

        return operations.list_settings(self.ws)

    def config_get(self, key: str) -> SettingEntry:
        from memcli.config import operations  # their result types load on a config call

        return operations.get_setting(key, self.ws)

    def config_set(self, key: str, text: str, *, user: bool = False) -> SettingChange:
        from memcli.config import operations  # their result types load on a config call

        change = operations.set_setting(key, text, self.ws, user=user)
        self._reload_settings()
        return change

    def config_unset(self, key: str, *, user: bool = False) -> SettingChange:
        from memcli.config import operations  # their result types load on a config call

        change = operations.unset_setting(key, self.ws, user=user)
        self._reload_settings()
        return change

    def config_paths(self) -> ConfigPaths:
        from memcli.config import operations  # their result types load on a config call

        return operations.config_paths(self.ws)

    def trust_state(self) -> TrustState:
        """Whether this workspace's memcli.toml is trusted, and what it sets that needs it."""
        from memcli.config.trust import trust_state  # trust code on a trust call only

        return trust_state(self.ws.root)

    def trust(self) -> TrustState:
        """Trust this workspace's memcli.toml as it is now: the settings needing trust it sets
        (providers' models, hosts and key variables, the prompt file) apply from now on,
        until its content changes. Recorded by digest in the user config."""
        from memcli.config.trust import trust  # trust code on a trust call only

        state = trust(self.ws.root)
        self._reload_settings(lenient=True)
        return state

    def revoke_trust(self) -> TrustState:
        """Forget the trust in this workspace's memcli.toml."""
        from memcli.config.trust import revoke  # trust code on a trust call only

        state = revoke(self.ws.root)
        self._reload_settings(lenient=True)
        return state

    def _reload_settings(self, *, lenient: bool = False) -> None:
        """Read the settings again (``lenient``: a bad value leaves the one below it); the
        embedder is made again from them when next needed."""
        flags = {k: v for k, v, origin in self.settings.items() if origin == "flag"}
        self.settings = load_settings(self.ws.root, flags, problems=[] if lenient else None)
        self._embedder.close()
        self._embedder.settings = self.settings
