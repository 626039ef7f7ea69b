"""Layered settings: defaults < user config < workspace memcli.toml < env < flags.

Every value remembers where it came from, so ``memcli config`` can show it. Every value is
checked against the registry (:mod:`memcli.config.registry`) as it is read: a bad one is a
ConfigError naming the key, the value, the allowed values and the file or variable.

A workspace memcli.toml arrives with a clone: settings that reach outside the workspace or
spend a credential (``Setting.needs_trust``) are taken from it only when the user config's
``[trust]`` table records the sha256 of its content (``memcli trust``); until then they are
kept aside in :attr:`Settings.ignored` and the layers below stay in effect.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from memcli.config.registry import REGISTRY, SETTINGS, coerce, default, lookup
from memcli.errors import ConfigError, PathOutsideWorkspace

#: The user config's table of trusted workspace files: ``"/path/memcli.toml" = "sha256:..."``.
TRUST_TABLE = "trust"


class TrustCheck(NamedTuple):
    """A workspace memcli.toml that sets settings needing trust: the digest of its content
    and the one the user trusted (None: never trusted)."""

    file: Path
    sha256: str
    trusted: str | None

    @property
    def ok(self) -> bool:
        return self.sha256 == self.trusted


class Settings:
    """Resolved settings with the origin of every value; ``ignored`` holds what an untrusted
    workspace memcli.toml set and was not taken (key -> its value there)."""

    __slots__ = ("values", "origins", "files", "ignored", "clamped", "trust")

    def __init__(
        self,
        values: dict[str, Any] | None = None,
        origins: dict[str, str] | None = None,
        files: dict[str, Path] | None = None,
    ) -> None:
        self.values: dict[str, Any] = values if values is not None else {}
        self.origins: dict[str, str] = origins if origins is not None else {}
        self.files: dict[str, Path] = files if files is not None else {}
        self.ignored: dict[str, Any] = {}
        #: what an untrusted workspace memcli.toml set outside a setting's safe range (key ->
        #: its value there); the value in effect is the nearest safe bound
        self.clamped: dict[str, Any] = {}
        #: set when the workspace file sets a setting that needs trust
        self.trust: TrustCheck | None = None

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


def _xdg_folder(variable: str, default: str) -> Path | None:
    """On Linux, memcli's folder in the XDG base folder ``variable`` names (when it holds an
    absolute path: a relative one is ignored, as the XDG spec says) or in its ``default`` under
    an absolute ``$HOME``, which is what platformdirs answers there; None elsewhere, or
    without an absolute ``$HOME``: then platformdirs is asked. Importing it (tempfile,
    shutil, bz2, lzma, random) costs about 8 ms, a tenth of a prompt hook's whole run."""
    if not sys.platform.startswith("linux"):
        return None
    base = os.environ.get(variable, "")
    if os.path.isabs(base):
        return Path(base) / "memcli"
    if not os.path.isabs(os.environ.get("HOME", "")):
        return None
    return Path(os.path.expanduser(f"~/{default}")) / "memcli"


def user_config_path() -> Path:
    """The user config file (platformdirs user config dir)."""
    override = os.environ.get("MEMCLI_CONFIG_DIR")
    if override:
        return Path(override) / "config.toml"
    folder = _xdg_folder("XDG_CONFIG_HOME", ".config")
    if folder is None:
        import platformdirs  # only when no path is given (start-up time)

        folder = Path(platformdirs.user_config_dir("memcli", appauthor=False))
    return folder / "config.toml"


def workspace_config_path(root: Path) -> Path:
    """The workspace's memcli.toml."""
    return root / "memcli.toml"


def cache_dir() -> Path:
    """The global cache dir (platformdirs user cache dir, ``MEMCLI_CACHE_DIR`` overrides)."""
    override = os.environ.get("MEMCLI_CACHE_DIR")
    if override:
        return Path(override)
    folder = _xdg_folder("XDG_CACHE_HOME", ".cache")
    if folder is None:
        import platformdirs  # only when no path is given (start-up time)

        folder = Path(platformdirs.user_cache_dir("memcli", appauthor=False))
    return folder


def confine_file(key: str, value: str, root: Path) -> Path:
    """The file a path setting names, relative to the workspace ``root``, links resolved; a
    path leading outside the workspace is refused, naming the setting."""
    target = (root / Path(value).expanduser()).resolve()
    inside = root.resolve()
    if target != inside and inside not in target.parents:
        raise PathOutsideWorkspace(
            f"{key}: {value!r} is outside the workspace {inside}",
            hint=f"a workspace's {key} names a file inside it; "
            "set a file elsewhere in your user config (--user)",
        )
    return target


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; a missing file is empty, a broken one a ConfigError."""
    return parse_toml(read_bytes(path), path)


#: The largest config (or prompt) file memcli reads: a real one is a few KiB.
MAX_CONFIG_BYTES = 1 << 20


def read_bytes(path: Path, limit: int = MAX_CONFIG_BYTES) -> bytes | None:
    """A config file's content; None when there is none. A file that is not a regular file
    (a link to ``/dev/zero``, a FIFO) or is larger than ``limit`` is a ConfigError: never
    read until memory runs out, never waited on."""
    from memcli.capped import NotRegular, TooLarge, read_capped

    try:
        return read_capped(path, limit)
    except FileNotFoundError:
        return None
    except NotRegular:
        raise ConfigError(f"{path}: not a regular file", hint="make it a plain file") from None
    except TooLarge:
        raise ConfigError(
            f"{path}: larger than {limit // 1024} KiB", hint="is it the right file?"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def parse_toml(data: bytes | None, path: Path) -> dict[str, Any]:
    """Parse a config file's content (None: no file, empty)."""
    if data is None:
        return {}
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
    *,
    trusted: bool = True,
) -> None:
    """Set every value of a parsed config file; ``problems`` collects errors instead of
    raising the first (the value stays as it was). Unless the file is ``trusted``, settings
    that need trust are checked and kept in ``settings.ignored`` instead."""
    for section, table in data.items():
        if not isinstance(table, dict) or not any(s.section == section for s in SETTINGS):
            _fail(ConfigError(f"{path}: unknown section [{section}]"), problems)
            continue
        for name, value in table.items():
            key = f"{section}.{name}"
            if key not in REGISTRY:
                _fail(ConfigError(f"{path}: unknown setting {key}"), problems)
                continue
            setting = REGISTRY[key]
            try:
                if trusted or not (setting.needs_trust or setting.safe):
                    settings.set(key, value, origin, str(path))
                elif setting.needs_trust:
                    settings.ignored[key] = coerce(key, value, str(path))
                else:
                    given = coerce(key, value, str(path))
                    settings.set(key, setting.clamp(given), origin, str(path))
                    if settings.values[key] != given:
                        settings.clamped[key] = given
            except ConfigError as exc:
                _fail(exc, problems)


def trust_settings(data: dict[str, Any]) -> dict[str, Any]:
    """What a parsed workspace file sets that is taken only once the file is trusted:
    settings needing trust, and values outside a setting's safe range (key -> value)."""
    found: dict[str, Any] = {}
    for section, table in data.items():
        if isinstance(table, dict):
            for name, value in table.items():
                setting = REGISTRY.get(f"{section}.{name}")
                if setting is None:
                    continue
                if setting.needs_trust:
                    found[setting.key] = value
                elif setting.safe is not None:
                    try:
                        given = coerce(setting.key, value)
                    except ConfigError:
                        continue  # reported when the file is applied
                    if setting.clamp(given) != given:
                        found[setting.key] = value
    return found


def trusted_paths(data: dict[str, Any], root: Path) -> list[tuple[str, Path]]:
    """The files a workspace file's settings name (``llm.prompt_file``): trusting the file
    trusts their content too. (setting, path) pairs."""
    out = []
    for section, table in data.items():
        if isinstance(table, dict):
            for name, value in table.items():
                setting = REGISTRY.get(f"{section}.{name}")
                if setting is not None and setting.path == "file" and value:
                    out.append((setting.key, root / Path(str(value)).expanduser()))
    return out


def digest(data: bytes, parsed: dict[str, Any] | None = None, root: Path | None = None) -> str:
    """How a trusted file's content is recorded: ``sha256:<hex>`` of its bytes and, with
    ``parsed`` and ``root``, of the name and content of every file its settings name (a
    changed prompt file needs trusting again, as a changed memcli.toml does)."""
    import hashlib  # only for a workspace file that sets a setting needing trust (start-up)

    h = hashlib.sha256(data)
    for key, path in trusted_paths(parsed or {}, root) if root is not None else ():
        try:
            content = read_bytes(path)
        except ConfigError:
            content = None
        h.update(f"\0{key}={path}\0".encode("utf-8", "surrogateescape"))
        h.update(b"-" if content is None else b"+" + content)
    return "sha256:" + h.hexdigest()


def trust_key(path: Path) -> str:
    """A workspace memcli.toml as the user config's [trust] table names it: its absolute
    path, with the workspace folder's links resolved (the file itself is not followed)."""
    return str(path.parent.resolve() / path.name)


def trusted_files(data: dict[str, Any], path: Path) -> dict[str, str]:
    """The [trust] table of a parsed user config (file -> digest)."""
    table = data.get(TRUST_TABLE, {})
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    ):
        raise ConfigError(
            f"{path}: [{TRUST_TABLE}] must map memcli.toml paths to sha256 digests",
            hint="it is written by 'memcli trust'; remove the table to start again",
        )
    return table


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
    trusted: dict[str, str] = {}
    for origin, path in files:
        settings.files[origin] = path
        try:
            raw = read_bytes(path)
            data = parse_toml(raw, path)
            if origin == "user":
                trusted = trusted_files(data, path)
                data = {k: v for k, v in data.items() if k != TRUST_TABLE}
        except ConfigError as exc:
            _fail(exc, problems)
            continue
        ok = True
        if origin == "workspace" and raw is not None and trust_settings(data):
            check = TrustCheck(path, digest(raw, data, path.parent), trusted.get(trust_key(path)))
            settings.trust, ok = check, check.ok
        apply_table(settings, data, origin, path, problems, trusted=ok)
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


def untrusted_warning(settings: Settings) -> str | None:
    """The one-line warning for settings a workspace file set and that are ignored."""
    check = settings.trust
    if check is None or check.ok or not (settings.ignored or settings.clamped):
        return None
    what = []
    if settings.ignored:
        what.append(f"ignoring {', '.join(sorted(settings.ignored))}")
    if settings.clamped:
        what.append(f"keeping {', '.join(sorted(settings.clamped))} within safe bounds")
    why = "changed since you trusted it" if check.trusted else "is not trusted"
    return f"{check.file} {why}: {'; '.join(what)} (review it, then run 'memcli trust')"
