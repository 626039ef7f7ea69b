"""Changing settings in a config file (``memcli config set/unset``): typed values from the
command line, no secrets, comments and layout kept (tomlkit), atomic replacement."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import memcli.safewrite as safewrite
from memcli.config.layers import TRUST_TABLE, Settings, apply_table
from memcli.config.registry import coerce, lookup, split_key
from memcli.errors import ConfigError
from memcli.notes.redact import contains_secret

#: A setting whose name contains one of these words would hold a secret: never stored.
SECRET_WORDS = ("key", "token", "secret", "password")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_value(key: str, text: str) -> Any:
    """A value typed on the command line, converted to the setting's type and checked
    against its allowed values.

    Lists take a TOML array (``["a", "b"]``) or comma-separated items.
    """
    if isinstance(lookup(key).default, list) and text.strip().startswith("["):
        import tomllib  # only for a list written as a TOML array (start-up time)

        try:
            text = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{key}: invalid list {text!r}: {exc}") from None
    return coerce(key, text)


def is_secret_name(name: str) -> bool:
    """``api_key``, ``token``, ``client_secret``, ``apikey``; not ``keyword_weight``."""
    return any(part.endswith(SECRET_WORDS) for part in re.split(r"[_.\-]", name.lower()))


def check_storable(key: str, value: Any = None) -> None:
    """Refuse to write a secret into a config file (keys, tokens, credentials in URLs)."""
    section, _, name = key.partition(".")
    if name != "api_key_env" and is_secret_name(name):
        raise ConfigError(
            f"{key}: memcli never stores API keys or other secrets in config files",
            hint=f"export the key (e.g. OPENAI_API_KEY) and name that variable in "
            f"{section or 'embedding'}.api_key_env",
        )
    split_key(key)
    if name == "api_key_env" and value and not _ENV_NAME.fullmatch(str(value)):
        raise ConfigError(
            f"{key} takes the name of an environment variable, not a key",
            hint=f"e.g. memcli config set {key} OPENAI_API_KEY",
        )
    if isinstance(value, str) and value and contains_secret(value):
        raise ConfigError(
            f"{key}: the value contains a secret; it is not written to a config file",
            hint="keep credentials in environment variables",
        )


def load_document(path: Path) -> Any:
    """A TOML file as a tomlkit document to edit (empty when the file does not exist);
    ConfigError when it cannot be read or parsed."""
    import tomlkit  # only when a file is written (start-up time)
    from tomlkit.exceptions import TOMLKitError  # with tomlkit above (start-up time)

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint="fix or remove the file") from None


def write_setting(
    path: Path, key: str, value: Any = None, *, remove: bool = False, user: bool = False
) -> bool:
    """Set (or remove) one setting in a TOML file (the ``user`` config.toml, which also
    holds the [trust] table, or a workspace memcli.toml), keeping its comments and layout.

    The file is replaced atomically and only when the result is a valid memcli config.
    Returns whether the file changed.
    """
    import tomlkit  # only when a file is written (start-up time)

    section, name = split_key(key)
    if not remove:
        check_storable(key, value)
    doc = load_document(path)
    text = doc.as_string()  # tomlkit gives back the file exactly: the "before" to compare
    table = doc.get(section)
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: {section} is not a table", hint="fix the file by hand")
    if remove:
        if table is None or name not in table:
            return False
        del table[name]
        if not table and "#" not in tomlkit.dumps({section: table}):  # no empty [section] left
            del doc[section]
    else:
        if table is None:
            table = tomlkit.table()
            doc[section] = table
        table[name] = value
    new_text = tomlkit.dumps(doc)
    if new_text == text:
        return False
    import tomllib  # the check below reads the result back as memcli will (start-up time)

    try:
        data = tomllib.loads(new_text)
        if user:
            data.pop(TRUST_TABLE, None)  # memcli trust's records, not settings
        apply_table(Settings.defaults(), data, "check", path)
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - tomlkit wrote it
        raise ConfigError(f"{path}: the change would make invalid TOML: {exc}") from None
    replace_file(path, new_text, *(() if user else (path.parent,)))
    return True


def replace_file(path: Path, text: str, *within: Path) -> None:
    """Replace a config file whole (:func:`memcli.safewrite.replace`, its mode kept);
    ``within``: the folders it must stay in (a workspace's ``memcli.toml``: the workspace),
    none for the user's own files."""
    safewrite.replace(path, text.encode("utf-8"), *within)
