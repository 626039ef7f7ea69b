"""Settings operations behind ``memcli config``: every setting with its origin, get, set,
unset and the config files' paths.

They work with or without a workspace (``config --user``, ``config`` outside one), so each is
a function taking where to look: a :class:`Workspace`, a folder, or None for the current
directory. :mod:`memcli.service.settings` runs them on a workspace's core (``Memory.config_*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcli.config import (
    SETTINGS,
    Settings,
    confine_file,
    load_settings,
    lookup,
    user_config_path,
    workspace_config_path,
)
from memcli.config.trust import TrustState, retrust_after_edit, trust_state
from memcli.errors import WorkspaceNotFound
from memcli.notes.workspace import Workspace, find_workspace

#: Where settings are looked up: a workspace, its folder, or None (the current directory).
Where = Workspace | str | Path | None


@dataclass
class SettingEntry:
    """One setting's value in effect, where it came from, its default and its variable;
    ``ignored``: the value an untrusted workspace memcli.toml gives it, not in effect."""

    key: str
    value: Any
    origin: str
    default: Any
    env: str
    ignored: Any = None

    @classmethod
    def of(cls, settings: Settings, key: str) -> SettingEntry:
        setting = lookup(key)
        return cls(
            key,
            settings.get(key),
            settings.origin(key),
            setting.default,
            setting.env,
            settings.ignored.get(key),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "origin": self.origin,
            "default": self.default,
            "env": self.env,
            "ignored": (
                None
                if self.ignored is None
                else {"value": self.ignored, "origin": "workspace", "reason": "untrusted"}
            ),
        }


@dataclass
class ConfigFile:
    path: Path
    exists: bool

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "exists": self.exists}


@dataclass
class SettingsListing:
    """Every setting in registry order, and the files they were read from."""

    workspace: Path | None
    user_file: ConfigFile
    workspace_file: ConfigFile | None
    entries: list[SettingEntry]
    trust: TrustState | None = None  # the workspace memcli.toml's (None outside a workspace)

    def as_dict(self) -> dict[str, Any]:
        return {
            "workspace": str(self.workspace) if self.workspace else None,
            "files": {
                "user": self.user_file.as_dict(),
                "workspace": self.workspace_file.as_dict() if self.workspace_file else None,
            },
            "settings": {e.key: e.as_dict() for e in self.entries},
            "trust": self.trust.as_dict() if self.trust else None,
        }


@dataclass
class SettingChange:
    """The outcome of ``config set`` (``value`` given) or ``config unset`` (``value`` None)."""

    key: str
    file: Path
    scope: str  # "workspace" or "user"
    changed: bool
    effective: SettingEntry  # the value in effect afterwards (a layer above may win)
    value: Any = None

    @property
    def is_set(self) -> bool:
        return self.value is not None

    @property
    def shadowed(self) -> bool:
        """A value was set but another layer still wins over it."""
        return self.is_set and self.effective.origin != self.scope

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key}
        if self.is_set:
            out["value"] = self.value
        out.update(
            changed=self.changed,
            file=str(self.file),
            scope=self.scope,
            effective={"value": self.effective.value, "origin": self.effective.origin},
        )
        return out


@dataclass
class ConfigPaths:
    """The config files memcli reads (they need not exist)."""

    user: Path
    workspace: Path | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "user": str(self.user),
            "workspace": str(self.workspace) if self.workspace else None,
        }


def find(where: Where, *, required: bool = False) -> Workspace | None:
    """The workspace at ``where``; None outside one unless it is ``required``."""
    if isinstance(where, Workspace):
        return where
    try:
        return find_workspace(where)
    except WorkspaceNotFound as exc:
        if required:
            exc.hint = "run 'memcli init', pass -w DIR, or use --user"
            raise
        return None


def _load(ws: Workspace | None) -> Settings:
    """Defaults, user config, workspace memcli.toml (with a workspace) and environment."""
    return load_settings(ws.root if ws else None)


def list_settings(where: Where = None) -> SettingsListing:
    """Every setting with its value and origin."""
    ws = find(where)
    settings = _load(ws)
    user = user_config_path()
    wsfile = workspace_config_path(ws.root) if ws else None
    return SettingsListing(
        ws.root if ws else None,
        ConfigFile(user, user.is_file()),
        ConfigFile(wsfile, wsfile.is_file()) if wsfile else None,
        [SettingEntry.of(settings, s.key) for s in SETTINGS],
        trust_state(ws.root) if ws else None,
    )


def get_setting(key: str, where: Where = None) -> SettingEntry:
    """One setting with its value, origin, default and variable."""
    lookup(key)  # an unknown key is refused before any file is read
    return SettingEntry.of(_load(find(where)), key)


def set_setting(key: str, text: str, where: Where = None, *, user: bool = False) -> SettingChange:
    """Write one setting, given as typed on a command line, to the workspace memcli.toml (or
    the ``user`` config.toml), keeping comments. Secrets and values outside the setting's
    allowed range are refused before any file is touched."""
    # tomlkit, tempfile and the secret scanner only when a file is written (start-up time)
    from memcli.config.files import check_storable, parse_value

    check_storable(key)  # a secret's name is refused before anything else is looked at
    value = parse_value(key, text)
    check_storable(key, value)
    path, scope, ws = _target(where, user)
    if ws is not None and not user and lookup(key).path == "file" and value:
        confine_file(key, value, ws.root)
    changed = _write(path, key, value, ws if not user else None)
    return SettingChange(key, path, scope, changed, SettingEntry.of(_load(ws), key), value)


def _write(path: Path, key: str, value: Any, ws: Workspace | None, remove: bool = False) -> bool:
    """Write one setting; in a workspace memcli.toml, the trust the file had is kept (the
    edit is the user's own), and an untrusted file stays untrusted."""
    from memcli.config.files import write_setting  # tomlkit: see set_setting

    if ws is None:
        return write_setting(path, key, value, remove=remove, user=True)
    before = trust_state(ws.root)
    changed = write_setting(path, key, value, remove=remove)
    if changed:
        retrust_after_edit(ws.root, before)
    return changed


def unset_setting(key: str, where: Where = None, *, user: bool = False) -> SettingChange:
    """Remove one setting from the workspace memcli.toml (or the ``user`` config.toml)."""
    lookup(key)
    path, scope, ws = _target(where, user)
    changed = _write(path, key, None, ws if not user else None, remove=True)
    return SettingChange(key, path, scope, changed, SettingEntry.of(_load(ws), key))


def config_paths(where: Where = None, *, require_workspace: bool = False) -> ConfigPaths:
    """The user config file and, in a workspace, its memcli.toml."""
    ws = find(where, required=require_workspace)
    return ConfigPaths(user_config_path(), workspace_config_path(ws.root) if ws else None)


def _target(where: Where, user: bool) -> tuple[Path, str, Workspace | None]:
    """The file a change goes to, its scope, and the workspace (for the settings after)."""
    if user:
        return user_config_path(), "user", find(where)
    ws = find(where, required=True)
    assert ws is not None
    return workspace_config_path(ws.root), "workspace", ws
