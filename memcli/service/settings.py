"""``memcli config`` on an open workspace: the settings operations of
:mod:`memcli.config.operations` (which also work outside one) as methods of ``Memory``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcli.config import load_settings
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from memcli.config.operations import ConfigPaths, SettingChange, SettingEntry, SettingsListing


class SettingsService(MemoryCore):
    """``memcli config`` on this workspace. After a change, :attr:`settings` is read again
    (command-line overrides kept); an embedder already made keeps its settings."""

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

    def _reload_settings(self) -> None:
        flags = {k: v for k, v, origin in self.settings.items() if origin == "flag"}
        self.settings = load_settings(self.ws.root, flags)
