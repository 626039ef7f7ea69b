"""Layered settings: defaults < user config < workspace memcli.toml < env < flags.

Every value remembers where it came from, so ``memcli config`` can show it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from memcli.errors import ConfigError

#: Built-in defaults. The type of each default is the type of the setting.
DEFAULTS: dict[str, dict[str, Any]] = {
    "embedding": {
        "model": "",
        "api_base": "",
        "api_key_env": "",
        "dimensions": 0,
        "batch_size": 64,
        "timeout": 30.0,
        "max_retries": 3,
    },
    "llm": {
        "model": "",
        "api_base": "",
        "api_key_env": "",
        "timeout": 60.0,
        "max_retries": 2,
        "prompt_file": "",
        "max_chars": 24000,
    },
    "search": {
        "limit": 8,
        "strategy": "auto",
        "min_score": 0.0,
        "fusion": "rrf",
        "rrf_k": 60,
        "keyword_weight": 0.5,
        "vector_weight": 0.5,
        "candidates": 50,
        "mmr": False,
        "mmr_lambda": 0.7,
        "snippet_lines": 1,  # context passages (list items, paragraphs) after/before a match
        "snippet_chars": 600,  # context is added only while a snippet stays within this
        "neighbour_weight": 0.6,  # share of the neighbouring passages' BM25 a passage gains
        "heading_weight": 0.3,  # weight of heading words in a passage's BM25
        "max_tokens": 1500,
    },
    "decay": {
        "enabled": False,
        "half_life_days": 30.0,
    },
    "index": {
        "include": ["memory/**/*.md"],
        "max_file_mb": 5.0,
        "sync_on_search": True,
        "chunk_chars": 320,
        "lock_timeout": 60.0,  # seconds a writer waits for another one
    },
    "cache": {
        "max_mb": 512.0,
    },
    "watch": {
        "debounce_ms": 300,
    },
    "git": {
        "sync_strategy": "rebase",
    },
}

ORIGINS = ("default", "user", "workspace", "env", "flag")
ENV_PREFIX = "MEMCLI_"


@dataclass
class Settings:
    """Resolved settings with the origin of every value."""

    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        """Return the value of ``section.name``."""
        section, name = split_key(key)
        return self.values[section][name]

    def section(self, name: str) -> dict[str, Any]:
        return self.values[name]

    def origin(self, key: str) -> str:
        return self.origins[key]

    def set(self, key: str, value: Any, origin: str) -> None:
        """Set one value (coerced to the setting's type) and record its origin."""
        section, name = split_key(key)
        self.values[section][name] = coerce(key, value)
        self.origins[key] = origin

    def items(self) -> list[tuple[str, Any, str]]:
        """All settings as (key, value, origin), in definition order."""
        return [
            (f"{s}.{n}", self.values[s][n], self.origins[f"{s}.{n}"])
            for s, names in DEFAULTS.items()
            for n in names
        ]


def split_key(key: str) -> tuple[str, str]:
    """Split ``section.name`` and check that the setting exists."""
    section, _, name = key.partition(".")
    if section not in DEFAULTS or name not in DEFAULTS[section]:
        raise ConfigError(f"unknown setting: {key!r}", hint="run 'memcli config' to list settings")
    return section, name


def coerce(key: str, value: Any) -> Any:
    """Convert ``value`` (often a string from env or CLI) to the setting's type."""
    section, name = split_key(key)
    default = DEFAULTS[section][name]
    try:
        if isinstance(default, bool):
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(value)
        if isinstance(default, int):
            if isinstance(value, bool):
                raise ValueError(value)
            return int(value)
        if isinstance(default, float):
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
        if isinstance(default, list):
            if isinstance(value, str):
                return [p.strip() for p in value.split(",") if p.strip()]
            if isinstance(value, list | tuple):
                return [str(v) for v in value]
            raise ValueError(value)
        if not isinstance(value, str):
            raise ValueError(value)
        return value
    except ValueError:
        kind = type(default).__name__
        raise ConfigError(f"setting {key} expects {kind}, got {value!r}") from None


def user_config_path() -> Path:
    """The user config file (platformdirs user config dir)."""
    override = os.environ.get("MEMCLI_CONFIG_DIR")
    if override:
        return Path(override) / "config.toml"
    import platformdirs

    return Path(platformdirs.user_config_dir("memcli", appauthor=False)) / "config.toml"


def cache_dir() -> Path:
    """The global cache dir (platformdirs user cache dir, ``MEMCLI_CACHE_DIR`` overrides)."""
    override = os.environ.get("MEMCLI_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("memcli", appauthor=False))


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; a missing file is empty, a broken one a ConfigError."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def _apply_table(settings: Settings, data: dict[str, Any], origin: str, path: Path) -> None:
    for section, table in data.items():
        if section not in DEFAULTS or not isinstance(table, dict):
            raise ConfigError(f"{path}: unknown section [{section}]")
        for name, value in table.items():
            key = f"{section}.{name}"
            if name not in DEFAULTS[section]:
                raise ConfigError(f"{path}: unknown setting {key}")
            settings.set(key, value, origin)


def load_settings(
    workspace_root: Path | None = None,
    overrides: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Resolve every layer into one Settings object."""
    env = os.environ if environ is None else environ
    settings = Settings(
        values={s: dict(v) for s, v in DEFAULTS.items()},
        origins={f"{s}.{n}": "default" for s, names in DEFAULTS.items() for n in names},
    )
    user = user_config_path()
    settings.files["user"] = user
    _apply_table(settings, read_toml(user), "user", user)
    if workspace_root is not None:
        ws = workspace_root / "memcli.toml"
        settings.files["workspace"] = ws
        _apply_table(settings, read_toml(ws), "workspace", ws)
    for section, names in DEFAULTS.items():
        for name in names:
            var = f"{ENV_PREFIX}{section.upper()}_{name.upper()}"
            if var in env:
                settings.set(f"{section}.{name}", env[var], "env")
    for key, value in (overrides or {}).items():
        if value is not None:
            settings.set(key, value, "flag")
    return settings
