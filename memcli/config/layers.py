"""Layered settings: defaults < user config < workspace memcli.toml < env < flags.

Every value remembers where it came from, so ``memcli config`` can show it. Every value is
checked against the registry (:mod:`memcli.config.registry`) as it is read: a bad one is a
ConfigError naming the key, the value, the allowed values and the file or variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memcli.config.registry import REGISTRY, SETTINGS, coerce, default, lookup
from memcli.errors import ConfigError


class Settings:
    """Resolved settings with the origin of every value."""

    __slots__ = ("values", "origins", "files")

    def __init__(
        self,
        values: dict[str, Any] | None = None,
        origins: dict[str, str] | None = None,
        files: dict[str, Path] | None = None,
    ) -> None:
        self.values: dict[str, Any] = values if values is not None else {}
        self.origins: dict[str, str] = origins if origins is not None else {}
        self.files: dict[str, Path] = files if files is not None else {}

    @classmethod
    def defaults(cls) -> Settings:
        """Every setting at its default."""
        return cls(
            values={s.key: default(s.key) for s in SETTINGS},
            origins={s.key: "default" for s in SETTINGS},
        )

    def get(self, key: str) -> Any:
        """Return the value of ``section.name``."""
        if key not in self.values:
            lookup(key)  # raises: unknown setting
        return self.values[key]

    def origin(self, key: str) -> str:
        return self.origins[key]

    def set(self, key: str, value: Any, origin: str, where: str = "") -> None:
        """Set one value (converted to the setting's type and checked) and record its origin.

        ``where`` names the file or variable the value came from, for the error."""
        self.values[key] = coerce(key, value, where)
        self.origins[key] = origin

    def items(self) -> list[tuple[str, Any, str]]:
        """All settings as (key, value, origin), in definition order."""
        return [(s.key, self.values[s.key], self.origins[s.key]) for s in SETTINGS]


def user_config_path() -> Path:
    """The user config file (platformdirs user config dir)."""
    override = os.environ.get("MEMCLI_CONFIG_DIR")
    if override:
        return Path(override) / "config.toml"
    import platformdirs  # only when no path is given (start-up time)

    return Path(platformdirs.user_config_dir("memcli", appauthor=False)) / "config.toml"


def workspace_config_path(root: Path) -> Path:
    """The workspace's memcli.toml."""
    return root / "memcli.toml"


def cache_dir() -> Path:
    """The global cache dir (platformdirs user cache dir, ``MEMCLI_CACHE_DIR`` overrides)."""
    override = os.environ.get("MEMCLI_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs  # only when no path is given (start-up time)

    return Path(platformdirs.user_cache_dir("memcli", appauthor=False))


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; a missing file is empty, a broken one a ConfigError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    import tomllib  # only when there is a file: most runs have none (start-up time)

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def apply_table(
    settings: Settings,
    data: dict[str, Any],
    origin: str,
    path: Path,
    problems: list[ConfigError] | None = None,
) -> None:
    """Set every value of a parsed config file; ``problems`` collects errors instead of
    raising the first (the value stays as it was)."""
    for section, table in data.items():
        if not isinstance(table, dict) or not any(s.section == section for s in SETTINGS):
            _fail(ConfigError(f"{path}: unknown section [{section}]"), problems)
            continue
        for name, value in table.items():
            key = f"{section}.{name}"
            if key not in REGISTRY:
                _fail(ConfigError(f"{path}: unknown setting {key}"), problems)
                continue
            try:
                settings.set(key, value, origin, str(path))
            except ConfigError as exc:
                _fail(exc, problems)


def _fail(exc: ConfigError, problems: list[ConfigError] | None) -> None:
    if problems is None:
        raise exc
    problems.append(exc)


def load_settings(
    workspace_root: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    problems: list[ConfigError] | None = None,
) -> Settings:
    """Resolve every layer into one Settings object.

    The first bad value is raised as a ConfigError; with a ``problems`` list, every bad value
    (or unreadable file) is appended to it instead and the layers below it stay in effect.
    """
    env = os.environ if environ is None else environ
    settings = Settings.defaults()
    files = [("user", user_config_path())]
    if workspace_root is not None:
        files.append(("workspace", workspace_config_path(workspace_root)))
    for origin, path in files:
        settings.files[origin] = path
        try:
            data = read_toml(path)
        except ConfigError as exc:
            _fail(exc, problems)
            continue
        apply_table(settings, data, origin, path, problems)
    for s in SETTINGS:
        if s.env in env:
            try:
                settings.set(s.key, env[s.env], "env", s.env)
            except ConfigError as exc:
                _fail(exc, problems)
    for key, value in (overrides or {}).items():
        if value is not None:
            settings.set(key, value, "flag")
    return settings
