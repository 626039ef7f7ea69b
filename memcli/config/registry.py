"""The settings registry: every setting declared once, with its type, default, bounds and help.

Config loading, ``memcli config``, ``memcli doctor``, the search options, the fusion code and
the docs generator all read :data:`SETTINGS`; nothing else holds a default.

A declaration table (one ``Setting`` a few lines each), listed as such in
``tests/test_module_size.py``: the one module allowed over 500 lines for its data.
"""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
import math
from typing import Any, NamedTuple

from memcli.errors import ConfigError

ENV_PREFIX = "MEMCLI_"

#: The value types a setting can have (the type of its default).
Value = bool | int | float | str | list[str]


class Setting(NamedTuple):
    """One setting: ``section.name``, its default (whose type is the setting's type), the
    allowed values (a closed range ``low..high``, ``above`` for an open lower bound, or
    ``choices``) and one line of help."""

    key: str
    default: Value
    help: str
    low: float | None = None
    high: float | None = None
    above: float | None = None  # the value must be greater than this
    choices: tuple[str, ...] = ()
    #: It reaches outside the workspace or spends a credential: a workspace memcli.toml sets
    #: it only once the user has trusted that file (``memcli trust``).
    needs_trust: bool = False
    #: Its value names paths in the workspace: ``"file"`` (one file) or ``"globs"``; they
    #: must stay inside it.
    path: str = ""
    #: It spends money, holds a process or waits: from a workspace memcli.toml that is not
    #: trusted, a value is kept within ``(low, high)`` (None: no bound on that side).
    safe: tuple[float | None, float | None] | None = None

    def clamp(self, value: Any) -> Any:
        """``value`` kept within :attr:`safe` (the nearest bound when outside it)."""
        if self.safe is None or isinstance(value, bool) or not isinstance(value, int | float):
            return value
        low, high = self.safe
        if low is not None and value < low:
            value = low
        if high is not None and value > high:
            value = high
        return int(value) if isinstance(self.default, int) else float(value)

    @property
    def section(self) -> str:
        return self.key.partition(".")[0]

    @property
    def name(self) -> str:
        return self.key.partition(".")[2]

    @property
    def kind(self) -> str:
        """The type's name as errors show it (bool, int, float, str, list)."""
        return type(self.default).__name__

    @property
    def env(self) -> str:
        """The environment variable that overrides this setting."""
        return f"{ENV_PREFIX}{self.section.upper()}_{self.name.upper()}"

    @property
    def bounded(self) -> bool:
        """Whether the setting's values are restricted beyond its type."""
        return bool(self.choices) or any(b is not None for b in (self.low, self.high, self.above))

    def allowed(self) -> str:
        """The allowed values in words, e.g. ``from 1 to 1000`` or ``one of rrf, weighted``."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.low is not None:
            if self.high is None:
                return f"{_num(self.low)} or more"
            return f"from {_num(self.low)} to {_num(self.high)}"
        if self.above is not None:
            if self.high is None:
                return f"above {_num(self.above)}"
            return f"above {_num(self.above)} and at most {_num(self.high)}"
        if self.high is not None:
            return f"at most {_num(self.high)}"
        return f"any {self.kind}"

    def admits(self, value: Any) -> bool:
        """Whether ``value`` (already of the setting's type) is one of the allowed values."""
        if self.choices:
            return value in self.choices
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True
        if value != value:  # NaN is within no range
            return False
        if self.above is not None and not value > self.above:
            return False
        if self.low is not None and value < self.low:
            return False
        return not (self.high is not None and value > self.high)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _s(key: str, default: Value, help: str, **bounds: Any) -> Setting:
    return Setting(key, default, help, **bounds)


#: Every setting, in the order ``memcli config`` and the man page list them.
SETTINGS: tuple[Setting, ...] = (
    # needs_trust: honoured from a workspace memcli.toml only once it is trusted (memcli trust)
    _s(
        "embedding.model",
        "",
        "Embedding model: a LiteLLM model (openai/text-embedding-3-small, ollama/...) or"
        " local/NAME, computed in-process with fastembed (empty: keyword search only).",
        needs_trust=True,
    ),
    _s(
        "embedding.model_path",
        "",
        "Folder holding a local/ model's files, for machines without internet (empty: fetched"
        " once into the cache folder).",
        needs_trust=True,
    ),
    _s(
        "embedding.api_base",
        "",
        "Base URL of an OpenAI-compatible server (Ollama, vLLM, ...).",
        needs_trust=True,
    ),
    _s(
        "embedding.api_key_env",
        "",
        "Name of the environment variable holding the API key.",
        needs_trust=True,
    ),
    _s(
        "embedding.dimensions",
        0,
        "Vector size to ask the model for (0: the model's own).",
        low=0,
        high=65536,
    ),
    _s(
        "embedding.batch_size",
        64,
        "Texts per embedding request.",
        low=1,
        high=4096,
        safe=(16, None),
    ),
    _s(
        "embedding.timeout",
        30.0,
        "Seconds per embedding request.",
        above=0,
        high=3600,
        safe=(None, 120),
    ),
    _s(
        "embedding.max_retries",
        3,
        "Retries after a failed request (429, 5xx, timeout).",
        low=0,
        high=20,
        safe=(None, 3),
    ),
    _s(
        "llm.model",
        "",
        "LiteLLM chat model used by flush (empty: flush is unavailable).",
        needs_trust=True,
    ),
    _s(
        "llm.api_base",
        "",
        "Base URL of an OpenAI-compatible server for the chat model.",
        needs_trust=True,
    ),
    _s(
        "llm.api_key_env",
        "",
        "Name of the environment variable holding the API key.",
        needs_trust=True,
    ),
    _s("llm.timeout", 60.0, "Seconds per chat request.", above=0, high=3600, safe=(None, 300)),
    _s(
        "llm.max_retries", 2, "Retries after a failed chat request.", low=0, high=20, safe=(None, 3)
    ),
    _s(
        "llm.prompt_file",
        "",
        "File with the fact-extraction instructions (empty: built in).",
        needs_trust=True,
        path="file",
    ),
    _s(
        "llm.max_chars",
        24000,
        "Conversation characters sent per chat request (longer ones are split).",
        low=100,
        high=10_000_000,
        safe=(8000, None),
    ),
    _s(
        "llm.max_requests",
        32,
        "Most LLM requests one flush may send (a longer conversation is refused first).",
        low=1,
        high=10_000,
        safe=(None, 32),
    ),
    _s("search.limit", 8, "Number of results (search -n).", low=1, high=1000),
    _s(
        "search.strategy",
        "auto",
        "Which signals search uses (auto: hybrid when vectors exist).",
        choices=("auto", "keyword", "vector", "hybrid"),
    ),
    _s("search.min_score", 0.0, "Drop results scoring below this.", low=0, high=1),
    _s(
        "search.fusion",
        "weighted",
        "How keyword and vector candidates combine (reciprocal rank or weighted).",
        choices=("rrf", "weighted"),
    ),
    _s("search.rrf_k", 60, "Rank damping of reciprocal rank fusion.", low=0, high=10000),
    # fusion weights chosen on the retrieval benchmark
    _s(
        "search.keyword_weight",
        0.6,
        "Weight of the keyword (BM25) score in fusion.",
        low=0,
        high=100,
    ),
    _s("search.vector_weight", 0.4, "Weight of the vector similarity in fusion.", low=0, high=100),
    _s(
        "search.candidates",
        50,
        "Candidates taken from each signal before fusion and filters.",
        low=1,
        high=10000,
    ),
    _s("search.mmr", False, "Diversify results with maximal marginal relevance."),
    _s(
        "search.mmr_lambda",
        0.7,
        "MMR trade-off: 1 = relevance only, lower = more diverse.",
        low=0,
        high=1,
    ),
    _s(
        "search.time_boost",
        0.5,
        "How far a time expression in the query (last week, in May 2023) lifts results"
        " dated in its window toward a score of 1 (0: off).",
        low=0,
        high=1,
    ),
    _s(
        "search.name_weight",
        1.0,
        "Weight of a proper name in the query (a word written with a capital after the first"
        " word) against other words of the same rarity.",
        low=0.1,
        high=10,
    ),
    # how far a fact is trusted (memcli.notes.lifecycle): a factor on its score
    _s(
        "search.trust_confirmed",
        1.15,
        "Score factor of a fact a person confirmed (memcli confirm); above 1 moves it toward 1.",
        low=0.1,
        high=10,
    ),
    _s(
        "search.trust_extracted",
        0.9,
        "Score factor of a fact extracted from a conversation by memcli flush.",
        low=0.1,
        high=10,
    ),
    _s(
        "search.trust_corroborated",
        0.05,
        "Score bonus per time a fact was added again (at most three count).",
        low=0,
        high=1,
    ),
    # context passages (list items, paragraphs) after/before a match
    _s(
        "search.snippet_lines",
        1,
        "Context passages shown before and after a match.",
        low=0,
        high=100,
    ),
    _s(
        "search.snippet_chars",
        600,
        "Context is added to a snippet only while it stays within this.",
        low=1,
        high=1_000_000,
    ),
    _s(
        "search.snippet_before_chars",
        500,
        "Context before a match is added only while the snippet stays within this.",
        low=0,
        high=1_000_000,
    ),
    _s(
        "search.hybrid_snippet_before_chars",
        350,
        "search.snippet_before_chars for a hybrid search (its extra results are worth more"
        " than context).",
        low=0,
        high=1_000_000,
    ),
    _s(
        "search.neighbour_weight",
        0.3,
        "Share of the neighbouring passages' BM25 a passage gains.",
        low=0,
        high=1,
    ),
    _s(
        "search.heading_weight",
        0.3,
        "Weight of heading words in a passage's BM25.",
        low=0,
        high=10,
    ),
    _s(
        "search.chunk_weight",
        1.0,
        "Share of its chunk's BM25 (FTS5, over a few neighbouring passages and the heading) a"
        " passage gains.",
        low=0,
        high=10,
    ),
    _s(
        "search.proximity_weight",
        0.5,
        "Bonus of a passage where neighbouring query words stand close together (times the"
        " rarer word's weight).",
        low=0,
        high=10,
    ),
    _s(
        "search.max_tokens",
        1500,
        "Token budget of search --format context.",
        low=1,
        high=10_000_000,
    ),
    _s("decay.enabled", False, "Lower the score of older dated files (evergreen files exempt)."),
    _s(
        "decay.half_life_days",
        30.0,
        "Age in days at which decay halves a score.",
        above=0,
        high=36500,
    ),
    _s(
        "index.include",
        ["memory/**/*.md"],
        "Globs of files to index, relative to the workspace (never leaving it).",
        path="globs",
    ),
    _s(
        "index.max_file_mb",
        5.0,
        "A larger file is indexed up to this size (its first lines), with a warning.",
        above=0,
        high=10240,
        safe=(None, 20),
    ),
    _s(
        "index.sync_on_search",
        True,
        "Check for changed files (a stat of each) and re-index them before each search;"
        " off: the index is trusted as it is.",
    ),
    _s(
        "index.freshness",
        "auto",
        "How a search checks for changed files: full (a stat of each), recent (the folders"
        " and the 64 files changed last; misses an old file rewritten in place) or auto (full"
        " below index.full_check_files files; above, recent and a full check at most"
        " index.full_check_secs apart).",
        choices=("auto", "full", "recent"),
    ),
    _s(
        "index.full_check_files",
        10_000,
        'With index.freshness = "auto": the number of files from which searches run the'
        " quick check.",
        low=0,
        high=100_000_000,
    ),
    _s(
        "index.full_check_secs",
        60,
        'With index.freshness = "auto", past index.full_check_files: seconds after which a'
        " search compares every file again (an old file rewritten in place is found then).",
        low=0,
        high=86400,
    ),
    _s(
        "index.chunk_chars",
        320,
        "Target size of a chunk in characters.",
        low=50,
        high=100_000,
        safe=(200, 4000),
    ),
    _s(
        "index.lock_timeout",
        60.0,
        "Seconds a writer waits for another one.",
        low=0,
        high=86400,
        safe=(None, 120),
    ),
    _s(
        "add.max_kb",
        64,
        "The largest fact add accepts, in KiB (keep a longer text as a file of its own).",
        low=1,
        high=1_048_576,
    ),
    _s(
        "cache.max_mb",
        512.0,
        "Size bound of the embedding cache (least recently used evicted).",
        low=0,
        high=1_048_576,
        needs_trust=True,
    ),
    _s(
        "watch.debounce_ms",
        300,
        "watch waits until files are quiet this long before indexing.",
        low=0,
        high=600_000,
    ),
    _s(
        "git.sync_strategy",
        "rebase",
        "How sync integrates remote changes.",
        choices=("rebase", "merge"),
    ),
    _s(
        "git.sync_timeout",
        60.0,
        "Seconds sync keeps retrying fetch, integrate and push while other clones push at the"
        " same time (jittered, growing pauses; 0: one attempt).",
        low=0,
        high=3600,
        safe=(None, 120),
    ),
    _s(
        "engine.idle_timeout",
        30.0,
        "Minutes without a request after which memcli serve stops (0: never).",
        low=0,
        high=10080,
        safe=(1, 60),
    ),
    _s(
        "engine.prune_from",
        5000,
        "Terms held by this many chunks or more get a learnt score bound in a running engine,"
        " which then scores only the chunks that can rank (same results).",
        low=1,
        high=100_000_000,
    ),
    _s(
        "engine.autostart",
        False,
        "A search with no engine running starts one in the background for the next ones.",
        needs_trust=True,
    ),
    _s(
        "agent.own_model",
        True,
        "With no llm.model, save an agent's sessions with that agent's own CLI and login"
        " (claude -p, codex exec, gemini -p).",
        needs_trust=True,
    ),
    _s(
        "agent.max_flushes_per_day",
        24,
        "Most sessions the agents' hooks save in a day (0: none); the rest wait for the next.",
        low=0,
        high=10_000,
        needs_trust=True,
    ),
    _s(
        "agent.briefing_tokens",
        1200,
        "Token budget of the briefing an agent's session starts with (memcli agent hook).",
        low=50,
        high=100_000,
        safe=(None, 4000),
    ),
    _s(
        "agent.briefing_types",
        ["decision", "constraint", "procedure"],
        "Entry types that stand until changed: the briefing lists them first.",
    ),
    _s(
        "agent.briefing_latest",
        12,
        "Latest entries in the briefing, after the standing ones (0: none).",
        low=0,
        high=1000,
        safe=(None, 50),
    ),
    _s(
        "agent.recall_tokens",
        600,
        "Token budget of the memories recalled for a prompt (0: recall nothing).",
        low=0,
        high=100_000,
        safe=(None, 2000),
    ),
    _s(
        "agent.recall_limit",
        3,
        "Memories recalled for a prompt, at most.",
        low=1,
        high=50,
        safe=(None, 10),
    ),
    _s(
        "agent.recall_min_score",
        0.45,  # LoCoMo dev: keeps 93% of questions' hits, 1 of 40 unrelated coding prompts
        "Keyword search (no embedding model): a prompt gets memories only when they score at"
        " least this (keeps noise out).",
        low=0,
        high=1,
    ),
    _s(
        "agent.recall_min_similarity",
        0.0,
        "With an embedding model: the least similarity to a prompt an entry needs to be"
        " recalled, besides being nearer the prompt than everyday requests are (0: the floor"
        " measured for the model, see `memcli init --local-model list`; 0.35 for a model not"
        " measured).",
        low=0,
        high=1,
    ),
)

#: Settings by key.
REGISTRY: dict[str, Setting] = {s.key: s for s in SETTINGS}

#: Defaults by section and name (a view of :data:`SETTINGS`, in the same order).
DEFAULTS: dict[str, dict[str, Any]] = {}
for _setting in SETTINGS:
    DEFAULTS.setdefault(_setting.section, {})[_setting.name] = _setting.default
del _setting


def default(key: str) -> Any:
    """The default of ``key`` (a fresh copy for a list)."""
    value = lookup(key).default
    return list(value) if isinstance(value, list) else value


def lookup(key: str) -> Setting:
    """The setting called ``key``; an unknown one is a ConfigError."""
    try:
        return REGISTRY[key]
    except KeyError:
        raise ConfigError(
            f"unknown setting: {key!r}", hint="run 'memcli config' to list settings"
        ) from None


def split_key(key: str) -> tuple[str, str]:
    """Split ``section.name`` and check that the setting exists."""
    s = lookup(key)
    return s.section, s.name


def env_var(key: str) -> str:
    """The environment variable that overrides ``section.name``."""
    return lookup(key).env


def coerce(key: str, value: Any, where: str = "") -> Any:
    """Convert ``value`` (often a string from env or CLI) to the setting's type and check it
    against the allowed values. ``where`` (a file or a variable) prefixes an error."""
    setting = lookup(key)
    prefix = f"{where}: " if where else ""
    try:
        out = _convert(setting.default, value)
    except ValueError:
        raise ConfigError(f"{prefix}setting {key} expects {setting.kind}, got {value!r}") from None
    if setting.choices and isinstance(out, str):
        out = out.lower()
    if not setting.admits(out):
        shown = f'"{out}"' if isinstance(out, str) else _num(out)
        raise ConfigError(f"{prefix}{key} must be {setting.allowed()}, got {shown}")
    if setting.path == "globs":
        for pattern in out:
            if _leaves(pattern):
                raise ConfigError(
                    f"{prefix}{key}: {pattern!r} leads outside the workspace",
                    hint="include patterns are relative to the workspace, without '..' or '~'",
                )
    return out


def _whole(value: Any) -> int | float:
    """``value`` as a whole number: ``"12"``, ``12.0`` and ``"1e3"`` are; ``2.5`` is refused
    (ValueError) rather than cut to 2; an infinite or NaN value is returned as it is, for the
    range check to name it (``int()`` of it raised OverflowError)."""
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    number = float(value)
    if not math.isfinite(number):
        return number
    if not number.is_integer():
        raise ValueError(value)
    return int(number)


def _leaves(pattern: str) -> bool:
    """A glob that names a parent folder (``..``) or a home folder (``~``)."""
    return pattern.startswith("~") or ".." in pattern.replace("\\", "/").split("/")


def _convert(default: Value, value: Any) -> Any:
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(value)
    if isinstance(default, int | float):
        if isinstance(value, bool):
            raise ValueError(value)
        return _whole(value) if isinstance(default, int) else float(value)
    if isinstance(default, list):
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        if isinstance(value, list | tuple):
            return [str(v) for v in value]
        raise ValueError(value)
    if not isinstance(value, str):
        raise ValueError(value)
    return value
