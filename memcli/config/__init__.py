"""Settings: the registry of every setting (:mod:`.registry`), the layers they are read from
(:mod:`.layers`) and writing them to a config file (:mod:`.files`, imported by its users: it
needs tomlkit and the secret scanner, which start-up does not)."""

from __future__ import annotations

from memcli.config.layers import (
    Settings,
    cache_dir,
    confine_file,
    load_settings,
    read_toml,
    user_config_path,
    workspace_config_path,
)
from memcli.config.registry import (
    DEFAULTS,
    ENV_PREFIX,
    REGISTRY,
    SETTINGS,
    Setting,
    coerce,
    default,
    env_var,
    lookup,
    split_key,
)

__all__ = [
    "DEFAULTS",
    "ENV_PREFIX",
    "REGISTRY",
    "SETTINGS",
    "Setting",
    "Settings",
    "cache_dir",
    "coerce",
    "confine_file",
    "default",
    "env_var",
    "load_settings",
    "lookup",
    "read_toml",
    "split_key",
    "user_config_path",
    "workspace_config_path",
]
