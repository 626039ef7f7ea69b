"""Checks of the embedding and LLM providers: one plain HTTP GET of ``{api_base}/models``
(LiteLLM is not imported)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from memcli.doctor.report import NOTE, OK, PROBLEM, Check
from memcli.index import db
from memcli.index.store import Store
from memcli.providers.embeddings import status_info
from memcli.providers.remote import provider_name
from memcli.version import __version__

#: Environment variables LiteLLM reads for hosted providers (checked when no api_base is set).
PROVIDER_KEYS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "voyage": "VOYAGE_API_KEY",
    "cohere": "COHERE_API_KEY",
    "mistral": "MISTRAL_API_KEY",
}


def _agent_llm(settings: Any, model: str, details: dict[str, Any]) -> Check | None:
    """The LLM check when an agent CLI answers: ``llm.model`` names one, or with no model the
    agents' own CLIs save their sessions (``agent.own_model``); None otherwise."""
    from memcli.providers.agentcli import BACKENDS, backend_of, find, own_model

    if model:
        named = backend_of(model)
        if named is None:
            return None
        backend = named[0]
        details["backend"] = backend.name
        program = find(backend)
        if program is None:
            return Check(
                "llm",
                PROBLEM,
                f"{model}: '{backend.program}' is not found on PATH",
                f"install {backend.name}, or set another llm.model",
                details,
            )
        return Check("llm", OK, f"{model}: {program}, with its own login", details=details)
    agents = [name for name in BACKENDS if own_model(settings, name)]
    if not agents:
        return None
    details["backend"], details["agents"] = "agent", agents
    return Check(
        "llm",
        OK,
        f"no model: sessions are saved by the agent's own CLI ({', '.join(agents)});"
        " 'memcli flush' needs llm.model",
        details=details,
    )


def _no_model(section: str, details: dict[str, Any]) -> Check:
    if section == "embedding":
        return Check(section, OK, "no model: keyword search (BM25), fully offline", details=details)
    return Check(
        section,
        NOTE,
        "no model: 'memcli flush' is not available",
        "memcli config set llm.model MODEL (and llm.api_base for a local server)",
        details,
    )


def _no_api_base(
    section: str, model: str, provider: str, key_env: str, details: dict[str, Any]
) -> Check:
    """A provider reached at its default address: its key checked, not its reachability."""
    needed = PROVIDER_KEYS.get(provider)
    if needed and not key_env:
        details["api_key_env"] = needed
        details["api_key_set"] = bool(os.environ.get(needed))
        if not details["api_key_set"]:
            return Check(
                section,
                PROBLEM,
                f"{model}: ${needed} is not set",
                f"export {needed}=... or set {section}.api_key_env",
                details,
            )
    return Check(
        section,
        NOTE,
        f"{model}: reachability not checked (no {section}.api_base)",
        details=details,
    )


def check_provider(ctx: dict[str, Any], section: str) -> Check:
    settings = ctx["settings"]
    model = str(settings.get(f"{section}.model") or "")
    api_base = str(settings.get(f"{section}.api_base") or "")
    key_env = str(settings.get(f"{section}.api_key_env") or "")
    details: dict[str, Any] = {
        "model": model or None,
        "api_base": api_base or None,
        "api_key_env": key_env or None,
        "api_key_set": bool(key_env and os.environ.get(key_env)),
        "reachable": None,
    }
    if section == "embedding" and ctx.get("ws") is not None and model:
        details["search"] = search_mode(ctx)
    if section == "llm":
        found = _agent_llm(settings, model, details)
        if found is not None:
            return found
    if not model:
        return _no_model(section, details)
    provider = provider_name(model)
    details["provider"] = provider
    if provider == "local" and section == "embedding":
        return check_local(ctx, model, details)
    if key_env and not os.environ.get(key_env):
        return Check(
            section,
            PROBLEM,
            f"{section}.api_key_env names ${key_env}, which is not set",
            f"export {key_env}=... before running memcli",
            details,
        )
    if not api_base:
        return _no_api_base(section, model, provider, key_env, details)
    if not ctx["network"]:
        return Check(
            section, NOTE, f"{model} at {api_base}: not checked (--offline)", details=details
        )
    key = os.environ.get(key_env) if key_env else None
    probe = probe_models(api_base, ctx["timeout"], key)
    details.update(probe)
    where = f"{model} at {api_base}"
    if not probe["reachable"]:
        return Check(
            section,
            PROBLEM,
            f"{where}: unreachable ({probe['error']})",
            f"start the server or fix {section}.api_base; 'memcli config' shows where it is set",
            details,
        )
    status = probe["status"]
    if status in (401, 403):
        return Check(
            section,
            PROBLEM,
            f"{where}: the server refused the credentials (HTTP {status})",
            f"check the key in ${key_env or 'the provider variable'}",
            details,
        )
    listed = probe["models"]
    if listed is not None and not model_listed(model, listed):
        return Check(
            section,
            NOTE,
            f"{where}: reachable, but the server does not list this model",
            f"models offered: {', '.join(listed[:8]) or 'none'}",
            details,
        )
    return Check(section, OK, f"{where}: reachable (HTTP {status})", details=details)


def check_local(ctx: dict[str, Any], model: str, details: dict[str, Any]) -> Check:
    """A ``local/NAME`` model: where its files are, and one test embedding (its dimension)."""
    import time

    from memcli.errors import ProviderError
    from memcli.providers.local import LocalEmbedder  # fastembed: loaded for the test only

    embedder = LocalEmbedder.from_settings(ctx["settings"])
    embedder.cache = None  # a test embedding, not a cached one
    details.update(where=embedder.where(), dimensions=None, seconds=None, runtime=None)
    if not embedder.model_path and not ctx["network"]:
        return Check("embedding", NOTE, f"{model}: not loaded (--offline)", details=details)
    start = time.perf_counter()
    try:
        vector = embedder.embed(["memcli doctor test embedding"])[0]
    except ProviderError as exc:
        return Check(
            "embedding",
            PROBLEM,
            exc.message,
            "pip install 'memcli[local]' (in a checkout: make extras), or set"
            " embedding.model_path to the model's folder",
            details,
        )
    seconds = round(time.perf_counter() - start, 3)
    details.update(dimensions=len(vector), seconds=seconds, runtime=embedder.runtime)
    summary = f"{model}: {len(vector)} dimensions, from {embedder.where()} ({embedder.runtime})"
    return Check("embedding", OK, summary, details=details)


def search_mode(ctx: dict[str, Any]) -> dict[str, Any] | None:
    """What ``memcli status`` would say about vectors (read-only, no provider call)."""
    ws = ctx["ws"]
    if not ws.index_path.is_file():
        return None

    conn = db.connect(ws.index_path, readonly=True)
    try:
        info = status_info(Store(ws.index_path, conn), ctx["settings"])
    except Exception as exc:  # an index that cannot say: the index check reports why
        return {"error": str(exc)}
    finally:
        conn.close()
    return {
        "mode": info["mode"],
        "mode_reason": info["mode_reason"],
        "coverage": info["embedding"].get("coverage"),
    }


def model_listed(model: str, listed: list[str]) -> bool:
    name = model.split("/", 1)[1] if "/" in model else model
    candidates = {model, name, f"{name}:latest"}
    return any(m in candidates or m.removesuffix(":latest") == name for m in listed)


def probe_models(api_base: str, timeout: float, key: str | None = None) -> dict[str, Any]:
    """GET ``{api_base}/models``: any HTTP answer means reachable; lists model ids if it can."""
    url = api_base.rstrip("/") + "/models"
    headers = {"User-Agent": f"memcli/{__version__}", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    result: dict[str, Any] = {
        "url": url,
        "reachable": False,
        "status": None,
        "models": None,
        "error": None,
    }
    # the configured api_base: a URL the user chose for this provider (S310)
    request = urllib.request.Request(url, headers=headers, method="GET")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            result["status"] = response.status
            body = response.read(1 << 20)
    except urllib.error.HTTPError as exc:
        result.update(reachable=True, status=exc.code)
        return result
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        result["error"] = str(reason) or type(reason).__name__
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            result["error"] = f"no answer within {timeout:g}s"
        return result
    result["reachable"] = True
    try:
        data = json.loads(body)
        items = data.get("data") if isinstance(data, dict) else None
        if isinstance(items, list):
            result["models"] = [str(i.get("id")) for i in items if isinstance(i, dict)]
    except ValueError:
        pass
    return result
