"""memcli.providers.remote against the loopback OpenAI stub, over real HTTP through real LiteLLM."""

from __future__ import annotations

import ipaddress
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcli.errors import ExitCode, ProviderError
from memcli.providers import remote
from memcli.providers.remote import ProviderConfig, complete, embed, provider_name
from tests.stub_openai import StubOpenAI, openai_stub, stub_vector

__all__ = ["openai_stub"]  # the fixture is used by name below

REPO = Path(__file__).resolve().parent.parent

# LiteLLM's pydantic models warn once on first use; memcli filters it, pytest re-enables it.
pytestmark = pytest.mark.filterwarnings("ignore:.*is using the `ReadOnly` qualifier")

# --- isolation: no home directory, no network -----------------------------------------------


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return True  # AF_UNIX paths and the like
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Refuse, and remember, every attempt to resolve or reach a non-loopback address."""
    attempts: list[object] = []
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if not _is_loopback(host):
            attempts.append(address)
            raise ConnectionRefusedError(f"test guard: no network ({address!r})")
        return real_connect(self, address)

    def guarded_getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if isinstance(host, bytes):
            host = host.decode()
        if not _is_loopback(host):
            attempts.append(host)
            raise socket.gaierror(socket.EAI_NONAME, f"test guard: no network ({host!r})")
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield attempts
    assert attempts == [], f"something tried to reach the network: {attempts}"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Home and XDG dirs in tmp_path, no real API keys, offline price map, instant backoff."""
    for var in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "LITELLM_LOG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    sleeps: list[float] = []
    monkeypatch.setattr(remote, "_sleep", sleeps.append)
    return sleeps


def _cfg(stub: StubOpenAI, model: str = "openai/stub-embed", **kw: object) -> ProviderConfig:
    return ProviderConfig(model=model, api_base=stub.base_url, **kw)  # type: ignore[arg-type]


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


# --- import cost ------------------------------------------------------------------------------


def test_import_does_not_pull_litellm_httpx_or_numpy(tmp_path: Path) -> None:
    code = (
        "import json, sys, memcli.providers.remote\n"
        "heavy = ('litellm', 'httpx', 'numpy', 'openai')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=REPO
    )
    assert json.loads(out.stdout) == []
    assert out.stderr == ""


_OFFLINE_SCRIPT = """
import json, os, socket, sys
blocked = []
real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect
def getaddrinfo(host, *a, **k):
    if host not in ("127.0.0.1", "localhost", b"127.0.0.1"):
        blocked.append(str(host))
        raise socket.gaierror(socket.EAI_NONAME, "no network in this test")
    return real_getaddrinfo(host, *a, **k)
def connect(self, addr):
    if isinstance(addr, tuple) and addr[0] not in ("127.0.0.1", "::1"):
        blocked.append(str(addr))
        raise ConnectionRefusedError("no network in this test")
    return real_connect(self, addr)
socket.getaddrinfo, socket.socket.connect = getaddrinfo, connect
from memcli.providers.remote import ProviderConfig, complete, embed
base = sys.argv[1]
vec = embed(["hello world"], ProviderConfig("openai/stub-embed", api_base=base))
reply = complete([{"role": "user", "content": "hi"}], ProviderConfig("openai/c", api_base=base))
print(json.dumps({"blocked": blocked, "dims": len(vec[0]), "reply": reply,
                  "env": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")}))
"""


@pytest.mark.slow
def test_first_call_in_fresh_process_is_offline_and_quiet(
    openai_stub: StubOpenAI, tmp_path: Path
) -> None:
    """Without the env var set by anyone else, memcli itself keeps LiteLLM off the network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "c"))
    out = subprocess.run(
        [sys.executable, "-c", _OFFLINE_SCRIPT, openai_stub.base_url],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)  # stdout holds our JSON and nothing from LiteLLM
    assert result == {"blocked": [], "dims": 64, "reply": '{"facts": []}', "env": "True"}
    assert out.stderr == ""  # no banners, no log lines, no warnings


# --- the stub itself --------------------------------------------------------------------------


def test_stub_routes_models_and_404(openai_stub: StubOpenAI) -> None:
    with urllib.request.urlopen(openai_stub.base_url + "/models", timeout=5) as resp:
        models = json.load(resp)
    assert [m["id"] for m in models["data"]] == ["stub-embed", "stub-chat"]
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(openai_stub.base_url + "/nope", timeout=5)
    assert info.value.code == 404
    assert json.loads(info.value.read())["error"]["type"] == "not_found_error"
    assert openai_stub.count("/models") == 1 and openai_stub.count("/nope") == 1


def test_stub_stop_joins_threads_even_while_hanging() -> None:
    before = {t.ident for t in threading.enumerate()}
    stub = StubOpenAI().start()
    stub.hang_seconds = 30

    def call() -> None:
        try:
            urllib.request.urlopen(stub.base_url + "/models", timeout=10).read()
        except (OSError, urllib.error.URLError):
            pass

    client = threading.Thread(target=call)
    client.start()
    deadline = time.monotonic() + 5
    while stub.count("/models") == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    stub.stop()
    client.join(5)
    assert time.monotonic() - started < 3
    leftover = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert leftover == []


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signals need the main thread"
)
def test_a_signal_taken_by_another_thread_ends_the_wait_for_a_hung_call(
    openai_stub: StubOpenAI,
) -> None:
    """The kernel may hand SIGINT to any thread of the process. The main thread, waiting for a
    hung request, raises KeyboardInterrupt at once, not when the request times out."""
    cfg = _cfg(openai_stub, timeout=20, max_retries=0)
    embed(["warm"], cfg)  # LiteLLM imported and its client made before the clock starts
    openai_stub.hang_seconds = 20

    def interrupt_from_here() -> None:
        deadline = time.monotonic() + 60
        while openai_stub.count("/embeddings") == 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # this thread, not the main

    # Python leaves SIGINT ignored when it started ignored (a job a shell put in the
    # background): the handler Ctrl-C has in a terminal is set for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    other = threading.Thread(target=interrupt_from_here)
    try:
        other.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            embed(["hung"], cfg)
        other.join(5)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert openai_stub.count("/embeddings") == 2
    assert time.monotonic() - started < 5  # the request alone would take 20 s


@given(st.text(max_size=200), st.sampled_from([8, 64, 256]))
def test_stub_vectors_are_deterministic_unit_vectors(text: str, dims: int) -> None:
    vec = stub_vector(text, dims)
    assert len(vec) == dims
    assert math.isclose(math.fsum(x * x for x in vec), 1.0, rel_tol=1e-9)
    assert vec == stub_vector(text, dims)


# --- embeddings -------------------------------------------------------------------------------


def test_embeddings_shape_order_and_determinism(openai_stub: StubOpenAI) -> None:
    texts = ["alpha beta", "gamma", "delta epsilon zeta"]
    first = embed(texts, _cfg(openai_stub))
    assert len(first) == 3 and all(len(v) == 64 for v in first)
    # the stub answers in reverse order: embed must sort by index
    assert first == [stub_vector(t, 64) for t in texts]
    assert embed(texts, _cfg(openai_stub)) == first
    body = openai_stub.requests[0]["body"]
    assert body["model"] == "stub-embed" and body["input"] == texts
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_similar_texts_are_closer_than_unrelated(openai_stub: StubOpenAI) -> None:
    a, b, c = embed(
        [
            "We use Valkey for the cache in production",
            "the production caches use valkey",
            "Quarterly budget meeting moved to Thursday",
        ],
        _cfg(openai_stub),
    )
    assert _cos(a, b) > _cos(a, c) + 0.3


def test_dimensions_parameter_is_sent_and_checked(openai_stub: StubOpenAI) -> None:
    vecs = embed(["one", "two"], _cfg(openai_stub), dimensions=16)
    assert [len(v) for v in vecs] == [16, 16]
    assert openai_stub.requests[-1]["body"]["dimensions"] == 16


def test_many_inputs_are_batched_in_order(openai_stub: StubOpenAI) -> None:
    texts = [f"memory number {i} about topic {i % 7}" for i in range(150)]
    vecs = embed(texts, _cfg(openai_stub), batch_size=64)
    assert vecs == [stub_vector(t, 64) for t in texts]
    sizes = [len(r["body"]["input"]) for r in openai_stub.requests]
    assert sizes == [64, 64, 22]


def test_empty_input_makes_no_request(openai_stub: StubOpenAI) -> None:
    assert embed([], _cfg(openai_stub)) == []
    assert openai_stub.requests == []


# --- chat -------------------------------------------------------------------------------------


def test_chat_reply_and_json_mode_in_body(openai_stub: StubOpenAI) -> None:
    reply = '{"facts": [{"text": "Use Valkey", "type": "decision", "tags": ["infra"]}]}'
    openai_stub.chat_replies = [reply]
    messages = [{"role": "system", "content": "extract"}, {"role": "user", "content": "hi"}]
    cfg = _cfg(openai_stub, model="openai/stub-chat")
    assert complete(messages, cfg) == reply
    body = openai_stub.requests[-1]["body"]
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"] == messages and body["model"] == "stub-chat"
    # scripted replies are used up: the stub's default answer follows
    assert complete(messages, cfg, json_mode=False) == '{"facts": []}'
    assert "response_format" not in openai_stub.requests[-1]["body"]
    assert openai_stub.count("/chat/completions") == 2


def test_chat_without_content_is_a_provider_error(openai_stub: StubOpenAI) -> None:
    openai_stub.garbage = True
    with pytest.raises(ProviderError, match="no message content"):
        complete([{"role": "user", "content": "hi"}], _cfg(openai_stub, model="openai/stub-chat"))


# --- keys -------------------------------------------------------------------------------------


def test_placeholder_key_for_local_servers(openai_stub: StubOpenAI) -> None:
    embed(["x"], _cfg(openai_stub))
    assert openai_stub.requests[-1]["headers"]["authorization"] == "Bearer sk-no-key"


def test_api_key_env_is_used(openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_TEST_KEY", "sk-test-abc")
    embed(["x"], _cfg(openai_stub, api_key_env="MEMCLI_TEST_KEY"))
    assert openai_stub.requests[-1]["headers"]["authorization"] == "Bearer sk-test-abc"


def test_missing_api_key_env_fails_before_any_request() -> None:
    cfg = ProviderConfig(model="openai/text-embedding-3-small", api_key_env="MEMCLI_NO_SUCH_KEY")
    with pytest.raises(ProviderError, match="MEMCLI_NO_SUCH_KEY"):
        embed(["x"], cfg)


# --- retries and failures ---------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 503, 429])
def test_transient_errors_are_retried_then_succeed(
    openai_stub: StubOpenAI,
    _isolated_env: list[float],  # noqa: PT019 - its value is the list of sleeps
    status: int,
) -> None:
    openai_stub.fail_status, openai_stub.fail_times = status, 2
    vecs = embed(["retry me"], _cfg(openai_stub))
    assert vecs == [stub_vector("retry me", 64)]
    assert openai_stub.count("/embeddings") == 3
    assert openai_stub.fail_status is None
    sleeps = _isolated_env
    assert len(sleeps) == 2 and all(0 < s <= remote._BACKOFF_CAP for s in sleeps)


def test_persistent_500_raises_after_all_attempts(openai_stub: StubOpenAI) -> None:
    openai_stub.fail_status = 500
    with pytest.raises(ProviderError) as info:
        embed(["x"], _cfg(openai_stub, max_retries=2))
    err = info.value
    assert openai_stub.count("/embeddings") == 3
    assert err.exit_code == ExitCode.PROVIDER
    assert "openai/stub-embed" in err.message and "HTTP 500" in err.message
    assert "after 3 attempts" in err.message and "\n" not in err.message


def test_persistent_500_on_chat(openai_stub: StubOpenAI) -> None:
    openai_stub.fail_status = 502
    with pytest.raises(ProviderError, match=r"LLM provider failed for openai/stub-chat: HTTP 502"):
        complete([{"role": "user", "content": "hi"}], _cfg(openai_stub, model="openai/stub-chat"))
    assert openai_stub.count("/chat/completions") == 4  # default: 3 retries


@pytest.mark.parametrize("status", [401, 400, 404])
def test_client_errors_are_not_retried(openai_stub: StubOpenAI, status: int) -> None:
    openai_stub.fail_status = status
    with pytest.raises(ProviderError, match=f"HTTP {status}") as info:
        embed(["x"], _cfg(openai_stub))
    assert openai_stub.count("/embeddings") == 1
    assert "attempts" not in info.value.message
    if status == 401:
        assert info.value.hint and "API key" in info.value.hint


@pytest.mark.slow
def test_hang_times_out_quickly(openai_stub: StubOpenAI) -> None:
    openai_stub.hang_seconds = 20
    started = time.monotonic()
    with pytest.raises(ProviderError, match="timed out after 1s"):
        embed(["x"], _cfg(openai_stub, timeout=1.0, max_retries=0))
    assert time.monotonic() - started < 5
    assert openai_stub.count("/embeddings") == 1


@pytest.mark.slow
def test_timeouts_are_retried(openai_stub: StubOpenAI) -> None:
    openai_stub.hang_seconds = 20
    with pytest.raises(ProviderError, match="timed out.*after 2 attempts"):
        embed(["x"], _cfg(openai_stub, timeout=0.5, max_retries=1))
    assert openai_stub.count("/embeddings") == 2


def test_connection_refused_is_retried_then_fails() -> None:
    stub = StubOpenAI().start()
    base = stub.base_url
    stub.stop()
    cfg = ProviderConfig(model="openai/stub-embed", api_base=base, max_retries=1)
    with pytest.raises(ProviderError, match="connection error.*after 2 attempts"):
        embed(["x"], cfg)


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("shape", "malformed embeddings.*2 vectors for 3 inputs"),
        ("nonfinite", "malformed embeddings.*non-finite"),
        ("text", "malformed response"),
    ],
)
def test_malformed_embeddings_are_provider_errors_without_retries(
    openai_stub: StubOpenAI, kind: str, why: str
) -> None:
    openai_stub.garbage, openai_stub.garbage_kind = True, kind
    with pytest.raises(ProviderError, match=why) as info:
        embed(["one", "two", "three"], _cfg(openai_stub))
    assert info.value.exit_code == ExitCode.PROVIDER
    assert "\n" not in info.value.message
    assert openai_stub.count("/embeddings") == 1  # garbage is not worth a retry


def test_server_ignoring_dimensions_is_caught(openai_stub: StubOpenAI) -> None:
    openai_stub.ignore_dimensions = True
    with pytest.raises(ProviderError, match="malformed embeddings.*64 dimensions, expected 8"):
        embed(["a"], _cfg(openai_stub), dimensions=8)
    assert openai_stub.requests[-1]["body"]["dimensions"] == 8


# --- provider_name ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("openai/text-embedding-3-small", "openai"),
        ("gpt-4o-mini", "openai"),
        ("ollama/nomic-embed-text", "ollama"),
        ("gemini/text-embedding-004", "gemini"),
        ("Voyage/voyage-3", "voyage"),
        ("/weird", "openai"),
    ],
)
def test_provider_name(model: str, name: str) -> None:
    assert provider_name(model) == name
