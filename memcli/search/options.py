"""What a search runs with: filters, options (defaults from the settings registry), checks."""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any, NamedTuple

from memcli.config.registry import default, lookup
from memcli.errors import BadInput
from memcli.search.request_fields import REQUEST_FIELDS

if TYPE_CHECKING:
    from memcli.search.fusion import FusionParams


class Filters(NamedTuple):
    """Restrictions applied to candidates (all optional)."""

    sources: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    path_glob: str | None = None
    include_inactive: bool = False  # superseded, retracted and expired facts too (marked)


_KEYS: list[str] = []


def _setting(key: str) -> Any:
    """The default of the setting ``key``, for the next field of :class:`SearchOptions` (the
    fields a setting sets come first, in the order of ``_KEYS``)."""
    _KEYS.append(key)
    return default(key)


class SearchOptions(NamedTuple):
    """How a search runs: the fields a setting sets (defaults: the registry's), then the
    filters, the date that decay counts from, and whether to explain scores."""

    limit: int = _setting("search.limit")
    min_score: float = _setting("search.min_score")
    strategy: str = _setting("search.strategy")
    candidates: int = _setting("search.candidates")
    decay: bool = _setting("decay.enabled")
    half_life_days: float = _setting("decay.half_life_days")
    snippet_lines: int = _setting("search.snippet_lines")  # context passages after/before a match
    # fusion of keyword and vector candidates (memcli.search.fusion; settings search.fusion etc.)
    fusion: str = _setting("search.fusion")
    rrf_k: int = _setting("search.rrf_k")
    keyword_weight: float = _setting("search.keyword_weight")
    vector_weight: float = _setting("search.vector_weight")
    # passages, snippets, diversity (memcli.search.ranking, memcli.search.snippets)
    snippet_chars: int = _setting("search.snippet_chars")
    neighbour_weight: float = _setting("search.neighbour_weight")
    heading_weight: float = _setting("search.heading_weight")
    proximity_weight: float = _setting("search.proximity_weight")
    chunk_weight: float = _setting("search.chunk_weight")
    snippet_before_chars: int = _setting("search.snippet_before_chars")
    hybrid_snippet_before_chars: int = _setting("search.hybrid_snippet_before_chars")
    mmr: bool = _setting("search.mmr")
    mmr_lambda: float = _setting("search.mmr_lambda")
    time_boost: float = _setting("search.time_boost")
    name_weight: float = _setting("search.name_weight")
    trust_confirmed: float = _setting("search.trust_confirmed")
    trust_extracted: float = _setting("search.trust_extracted")
    trust_corroborated: float = _setting("search.trust_corroborated")
    filters: Filters = Filters()
    today: date | None = None
    explain: bool = False

    @classmethod
    def from_settings(cls, settings: Any, **given: Any) -> "SearchOptions":
        """Every field that a setting sets, from ``settings`` (a memcli.config.Settings), with
        the fields in ``given`` on top."""
        values = {name: settings.get(key) for name, key in SETTING_OF.items()}
        return cls(**{**values, **given})

    def fusion_params(self) -> "FusionParams":
        from memcli.search.fusion import FusionParams  # vectors only: keyword search never fuses

        return FusionParams(self.fusion, self.rrf_k, self.keyword_weight, self.vector_weight)


#: The setting behind each field of :class:`SearchOptions` that a setting sets.
SETTING_OF: dict[str, str] = dict(zip(SearchOptions._fields, _KEYS, strict=False))


def check_date(value: str | None, field: str) -> str | None:
    """``value`` (the one date grammar, :mod:`memcli.notes.dates`) as YYYY-MM-DD."""
    if value is None:
        return None
    from memcli.notes.dates import day_of  # a date flag's own

    return day_of(value, field).isoformat()


def check_options(opts: SearchOptions) -> None:
    """Refuse a value the settings registry does not allow (exit 2): options built by a
    library caller get the checks a setting or a flag gets."""
    for name, key in SETTING_OF.items():
        check_value(key, getattr(opts, name))


def check_value(key: str, value: Any, name: str | None = None) -> None:
    """BadInput unless ``value`` is allowed for the setting ``key``; ``name``: the request's
    field that gave it (each adapter names it its way), else the setting is named."""
    setting = lookup(key)
    if not setting.admits(value):
        shown = f'"{value}"' if isinstance(value, str) else value
        said, fields = ("{" + name + "}", (name,)) if name else (key, ())
        raise BadInput(f"{said} must be {setting.allowed()}, got {shown}", fields=fields)


class SearchRequest(NamedTuple):
    """What a caller asks of a search; None and empty leave the settings' value. Its fields
    are those of :data:`~memcli.search.request_fields.REQUEST_FIELDS`, in order."""

    limit: int | None = None
    min_score: float | None = None
    source: Sequence[str] = ()  # namespaces
    type: Sequence[str] = ()  # entry types
    tag: Sequence[str] = ()
    since: str | None = None  # YYYY-MM-DD, on the file's date
    until: str | None = None
    path: str | None = None  # a glob or a prefix of workspace-relative paths
    decay: bool | None = None
    strategy: str | None = None
    mmr: bool | None = None
    mmr_lambda: float | None = None
    include_inactive: bool = False  # superseded, retracted and expired facts too
    explain: bool = False

    def checked(self) -> "SearchRequest":
        """This request with its dates written as YYYY-MM-DD, after checking them and the
        numbers against the settings registry's bounds (BadInput). The CLI checks before it
        opens a workspace; :func:`memcli.service.searching.search_options` checks again."""
        since, until = check_date(self.since, "since"), check_date(self.until, "until")
        for field in REQUEST_FIELDS:
            value = getattr(self, field.name)
            if field.setting is not None and value is not None:
                check_value(field.setting, value, field.name)
        return self._replace(since=since, until=until)

    def payload(self) -> dict[str, Any]:
        """This request as JSON for the workspace's engine: every declared field, a list
        field as a list."""
        values = [(f, getattr(self, f.name)) for f in REQUEST_FIELDS]
        return {f.name: list(v) if f.kind == "list" else v for f, v in values}

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> "SearchRequest":
        """The request of a :meth:`payload`; ValueError when it holds a field not declared
        (the engine then leaves the search to its caller)."""
        names = {f.name for f in REQUEST_FIELDS}
        unknown = sorted(set(payload) - names)
        if unknown:
            raise ValueError(f"not fields of a search request: {', '.join(unknown)}")
        return cls(**payload)
