"""Asking the model for facts: the ``[llm]`` provider settings, the call, and strict validation
of its JSON reply (a bad reply is asked for once more, then it is a provider failure)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import NamedTuple

from memcli.config import Settings
from memcli.errors import ConfigError, ProviderError
from memcli.flush.facts import Fact
from memcli.providers.remote import ProviderConfig, config_from_settings

#: Longest fact text accepted from the model (characters, after whitespace is collapsed).
MAX_FACT_CHARS = 1000
#: Most facts accepted in one reply.
MAX_FACTS_PER_REPLY = 100

_WORD = re.compile(r"^[\w][\w\-/]*$")
_FENCE = re.compile(r"^```[A-Za-z]*[ \t]*\n(.*)\n```$", re.DOTALL)

#: The chat call: ``complete(messages, cfg, json_mode=True) -> reply text``
#: (:func:`memcli.providers.remote.complete`).
Complete = Callable[..., str]


class BadReply(ValueError):
    """The model's answer is not a valid facts object."""


def llm_config(settings: Settings, agent: str | None = None) -> ProviderConfig:
    """ProviderConfig for ``[llm]``, or with no model set the CLI of ``agent``, the coding
    agent whose session this is (:func:`own_model`); a ConfigError when there is neither."""
    cfg = config_from_settings(settings, "llm")
    if cfg is None:
        from memcli.providers.agentcli import own_model  # names and PATH look-ups only

        model = own_model(settings, agent)
        if model is not None:
            return ProviderConfig(
                model=model,
                timeout=float(settings.get("llm.timeout")),
                max_retries=int(settings.get("llm.max_retries")),
            )
        raise ConfigError(
            "no LLM model configured for flush",
            hint="set [llm] model in memcli.toml, or MEMCLI_LLM_MODEL (e.g. openai/gpt-4o-mini,"
            " or claude-code or codex: the agent CLI you have, with its own login)",
        )
    return cfg


class Reply(NamedTuple):
    """The valid facts of a reply, and why each other candidate was rejected."""

    facts: list[Fact]
    rejected: list[str]


def parse_reply(text: str) -> list[Fact]:
    """The valid facts of a model reply (see :func:`read_reply`)."""
    return read_reply(text).facts


def read_reply(text: str) -> Reply:
    """Validate a model reply strictly; its valid facts and the reasons for the others.

    Accepted: one JSON object (optionally wrapped in a single Markdown code fence) with a
    ``facts`` list; each fact an object with a non-empty string ``text``, an optional one-word
    ``type`` and an optional list of one-word ``tags``. Other keys are ignored. A candidate
    that breaks these rules is rejected alone; a reply that is not such an object, or whose
    candidates are all rejected, raises :class:`BadReply`.
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except ValueError:
        raise BadReply("not JSON") from None
    if not isinstance(data, dict):
        raise BadReply("not a JSON object")
    items = data.get("facts")
    if not isinstance(items, list):
        raise BadReply('no "facts" list')
    if len(items) > MAX_FACTS_PER_REPLY:
        raise BadReply(f"more than {MAX_FACTS_PER_REPLY} facts")
    facts: list[Fact] = []
    rejected: list[str] = []
    for n, item in enumerate(items, 1):
        try:
            facts.append(_parse_fact(item, n))
        except BadReply as exc:
            rejected.append(f"{exc}{_quoted(item)}")
    if rejected and not facts:
        raise BadReply(rejected[0])
    return Reply(facts, rejected)


def _quoted(item: object) -> str:
    """The start of a rejected candidate's text, to name it in a warning."""
    text = item.get("text") if isinstance(item, dict) else None
    if not isinstance(text, str) or not text.strip():
        return ""
    one = " ".join(text.split())
    return f": {one[:60]!r}" if len(one) <= 60 else f": {one[:59] + '…'!r}"


def _parse_fact(item: object, n: int) -> Fact:
    if not isinstance(item, dict):
        raise BadReply(f"fact {n} is not an object")
    raw = item.get("text")
    if not isinstance(raw, str) or not raw.strip():
        raise BadReply(f"fact {n} has no text")
    text = " ".join(raw.split())  # one line: a fact cannot add headings or list items
    if len(text) > MAX_FACT_CHARS:
        raise BadReply(f"fact {n} is longer than {MAX_FACT_CHARS} characters")
    kind = item.get("type")
    if kind is not None and not isinstance(kind, str):
        raise BadReply(f"fact {n} has a type that is not a string")
    kind = (kind or "").strip().strip("[]").lower() or None
    if kind is not None and not _WORD.match(kind):
        raise BadReply(f"fact {n} has a type that is not one word")
    raw_tags = item.get("tags")
    if raw_tags is None:
        raw_tags = []
    if not isinstance(raw_tags, list) or not all(isinstance(t, str) for t in raw_tags):
        raise BadReply(f"fact {n} has tags that are not a list of strings")
    tags: list[str] = []
    for tag in raw_tags:
        name = tag.strip().lstrip("#").lower()
        if not _WORD.match(name):
            raise BadReply(f"fact {n} has a tag that is not one word")
        if name not in tags:
            tags.append(name)
    return Fact(text, kind, tuple(tags))


def ask(
    messages: list[dict[str, str]],
    cfg: ProviderConfig,
    complete: Complete,
    counter: list[int],
    max_requests: int | None = None,
) -> Reply:
    """One part: ask, validate, ask once more on a bad reply, then give up (exit 4).

    ``counter[0]`` counts the requests sent, failed ones included; none is sent once it
    reaches ``max_requests`` (``llm.max_requests``): a ProviderError says so.
    """
    reason = ""
    for _attempt in range(2):
        if max_requests is not None and counter[0] >= max_requests:
            raise ProviderError(
                f"flush stopped after {counter[0]} LLM requests (llm.max_requests);"
                " nothing was written",
                hint="try again, or raise llm.max_requests",
            )
        counter[0] += 1
        reply = complete(messages, cfg, json_mode=True)
        try:
            return read_reply(reply)
        except BadReply as exc:
            reason = str(exc)
    raise ProviderError(
        f"LLM {cfg.model} did not answer with valid facts JSON after 2 attempts ({reason})",
        hint="try again, another [llm] model, or a clearer {prompt_file}",
        fields=("prompt_file",),
    )
