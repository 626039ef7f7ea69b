"""Layered settings: defaults < user config < workspace memcli.toml < env < flags.

Every value remembers where it came from, so ``memcli config`` can show it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
        "keyword_weight": 0.9,  # fusion weights chosen on the retrieval benchmark
        "vector_weight": 0.1,
        "candidates": 50,
        "mmr": False,
        "mmr_lambda": 0.7,
        "snippet_lines": 1,  # context passages (list items, paragraphs) after/before a match
        "snippet_chars": 600,  # context is added only while a snippet stays within this
        "neighbour_weight": 0.3,  # share of the neighbouring passages' BM25 a passage gains
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


# -- showing and changing settings (memcli config) ------------------------------------------
#: A setting whose name contains one of these words would hold a secret: never stored.
SECRET_WORDS = ("key", "token", "secret", "password")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_var(key: str) -> str:
    """The environment variable that overrides ``section.name``."""
    section, name = split_key(key)
    return f"{ENV_PREFIX}{section.upper()}_{name.upper()}"


def parse_value(key: str, text: str) -> Any:
    """A value typed on the command line, converted to the setting's type.

    Lists take a TOML array (``["a", "b"]``) or comma-separated items.
    """
    section, name = split_key(key)
    if isinstance(DEFAULTS[section][name], list) and text.strip().startswith("["):
        import tomllib

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
    if isinstance(value, str) and value:
        from memcli.notes.redact import contains_secret

        if contains_secret(value):
            raise ConfigError(
                f"{key}: the value contains a secret; it is not written to a config file",
                hint="keep credentials in environment variables",
            )


def write_setting(path: Path, key: str, value: Any = None, *, remove: bool = False) -> bool:
    """Set (or remove) one setting in a TOML file, keeping its comments and layout.

    The file is replaced atomically and only when the result is a valid memcli config.
    Returns whether the file changed.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    section, name = split_key(key)
    if not remove:
        check_storable(key, value)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint="fix or remove the file") from None
    table = doc.get(section)
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: {section} is not a table", hint="fix the file by hand")
    if remove:
        if table is None or name not in table:
            return False
        del table[name]
    else:
        if table is None:
            table = tomlkit.table()
            doc[section] = table
        table[name] = value
    new_text = tomlkit.dumps(doc)
    if new_text == text:
        return False
    check = Settings(
        values={s: dict(v) for s, v in DEFAULTS.items()},
        origins={f"{s}.{n}": "default" for s, names in DEFAULTS.items() for n in names},
    )
    import tomllib

    try:
        _apply_table(check, tomllib.loads(new_text), "check", path)
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - tomlkit wrote it
        raise ConfigError(f"{path}: the change would make invalid TOML: {exc}") from None
    _replace_file(path, new_text)
    return True


def _replace_file(path: Path, text: str) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


#: One line per setting, for ``memcli config`` and the man page (a new setting may add one).
HELP: dict[str, str] = {
    "embedding.model": "LiteLLM model for embeddings (empty: keyword search only).",
    "embedding.api_base": "Base URL of an OpenAI-compatible server (Ollama, vLLM, ...).",
    "embedding.api_key_env": "Name of the environment variable holding the API key.",
    "embedding.dimensions": "Vector size to ask the model for (0: the model's own).",
    "embedding.batch_size": "Texts per embedding request.",
    "embedding.timeout": "Seconds per embedding request.",
    "embedding.max_retries": "Retries after a failed request (429, 5xx, timeout).",
    "llm.model": "LiteLLM chat model used by flush (empty: flush is unavailable).",
    "llm.api_base": "Base URL of an OpenAI-compatible server for the chat model.",
    "llm.api_key_env": "Name of the environment variable holding the API key.",
    "llm.timeout": "Seconds per chat request.",
    "llm.max_retries": "Retries after a failed chat request.",
    "llm.prompt_file": "File with the fact-extraction instructions (empty: built in).",
    "llm.max_chars": "Conversation characters sent per chat request (longer ones are split).",
    "search.limit": "Number of results (search -n).",
    "search.strategy": "auto, keyword, vector or hybrid (auto: hybrid when vectors exist).",
    "search.min_score": "Drop results scoring below this (0..1).",
    "search.fusion": "How keyword and vector candidates combine: rrf or weighted.",
    "search.rrf_k": "Rank damping of reciprocal rank fusion.",
    "search.keyword_weight": "Weight of the keyword (BM25) score in fusion.",
    "search.vector_weight": "Weight of the vector similarity in fusion.",
    "search.candidates": "Candidates taken from each signal before fusion and filters.",
    "search.mmr": "Diversify results with maximal marginal relevance.",
    "search.mmr_lambda": "MMR trade-off: 1 = relevance only, lower = more diverse.",
    "search.snippet_lines": "Context passages shown before and after a match.",
    "search.snippet_chars": "Context is added to a snippet only while it stays within this.",
    "search.neighbour_weight": "Share of the neighbouring passages' BM25 a passage gains.",
    "search.heading_weight": "Weight of heading words in a passage's BM25.",
    "search.max_tokens": "Token budget of search --format context.",
    "decay.enabled": "Lower the score of older dated files (evergreen files exempt).",
    "decay.half_life_days": "Age in days at which decay halves a score.",
    "index.include": "Globs of files to index, relative to the workspace.",
    "index.max_file_mb": "Files larger than this are skipped with a warning.",
    "index.sync_on_search": (
        "Check for changed files (a stat of each) and re-index them before each search;"
        " off: the index is trusted as it is."
    ),
    "index.chunk_chars": "Target size of a chunk in characters.",
    "index.lock_timeout": "Seconds a writer waits for another one.",
    "cache.max_mb": "Size bound of the embedding cache (least recently used evicted).",
    "watch.debounce_ms": "watch waits until files are quiet this long before indexing.",
    "git.sync_strategy": "How sync integrates remote changes: rebase or merge.",
}
