"""Provider failures classified for the scheduler, the connection test, and preset problems."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from justkernel.agents.errors import ProviderConfigError, classify_error
from justkernel.agents.provider_check import test_connection as check_connection
from justkernel.agents.providers import build_chat_model
from justkernel.settings.models import ModelPreset
from justkernel.settings.secrets import SecretsStore
from tests.agents.test_providers import KEY, make_preset
from tests.support.openai_server import Fail, OpenAIServer, Reply, Usage


@pytest.fixture
def secrets(tmp_path: Path) -> SecretsStore:
    store = SecretsStore(tmp_path / "config")
    store.set("test_key", KEY)
    return store


@pytest.fixture(scope="module")
def shared_server() -> Iterator[OpenAIServer]:
    """One server for the many one-request cases; each test appends the answer it needs."""
    with OpenAIServer([], api_key=KEY) as server:
        yield server


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (Fail(401, "Incorrect API key provided", code="invalid_api_key"), "auth"),
        (Fail(403, "Permission denied for this model", type="permission_error"), "auth"),
        # DeepSeek's answer when the account is empty
        (Fail(402, "Insufficient Balance", type="unknown_error"), "balance"),
        # OpenAI's: a 429 that waiting will not fix
        (
            Fail(
                429,
                "You exceeded your current quota, please check your plan and billing details.",
                type="insufficient_quota",
                code="insufficient_quota",
            ),
            "balance",
        ),
        # DashScope (Qwen): overdue account
        (
            Fail(
                400,
                "Access denied, please make sure your account is in good standing.",
                code="Arrearage",
            ),
            "balance",
        ),
        (Fail(429, "Rate limit reached for requests", code="rate_limit_exceeded"), "rate_limit"),
        (Fail(500, "The server had an error while processing your request."), "transient"),
        (Fail(503, "Service overloaded, try again later.", type="server_error"), "transient"),
        (Fail(400, "Invalid value for 'tool_choice'."), "bad_request"),
        (Fail(404, "The model `nope` does not exist", code="model_not_found"), "bad_request"),
    ],
    ids=lambda v: getattr(v, "message", v)[:24] if isinstance(v, Fail) else v,
)
def test_http_failures_are_classified(
    secrets: SecretsStore, shared_server: OpenAIServer, failure: Fail, kind: str
) -> None:
    shared_server.add(failure)
    model = build_chat_model(make_preset(shared_server), secrets, max_retries=0)
    with pytest.raises(openai.APIError) as raised:
        model.invoke("hi")
    assert shared_server.requests[-1].status == failure.status
    error = classify_error(raised.value)
    assert (error.kind, error.status) == (kind, failure.status)
    assert error.message == failure.message
    assert error.pauses_dispatch is (kind in ("auth", "balance"))


def test_classification_sees_through_wrapping(secrets: SecretsStore) -> None:
    with OpenAIServer([Fail(402, "Insufficient Balance")]) as server:
        model = build_chat_model(make_preset(server), secrets, max_retries=0)
        try:
            model.invoke("hi")
        except openai.APIError as exc:
            wrapped = RuntimeError("model call failed in the harness")
            wrapped.__cause__ = exc
    assert classify_error(wrapped).kind == "balance"


def test_retries_are_small_and_configurable(secrets: SecretsStore) -> None:
    script = [Fail(500, "blip", retry_after_ms=1), Reply(text="recovered")]
    with OpenAIServer(script) as server:
        model = build_chat_model(make_preset(server), secrets, max_retries=1)
        assert model.invoke("hi").text == "recovered"
    assert [r.status for r in server.requests] == [500, 200]


def test_timeout_is_transient(secrets: SecretsStore) -> None:
    with OpenAIServer([Reply(text="too late", delay_s=0.3)]) as server:
        model = build_chat_model(make_preset(server), secrets, max_retries=0, timeout=0.1)
        with pytest.raises(openai.APITimeoutError) as raised:
            model.invoke("hi")
    error = classify_error(raised.value)
    assert (error.kind, error.message) == ("transient", "request timed out")


def test_unreachable_server_is_transient(secrets: SecretsStore) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    preset = ModelPreset(
        name="gone",
        provider="openai_compatible",
        model="m",
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key_secret="test_key",
    )
    with pytest.raises(openai.APIConnectionError) as raised:
        build_chat_model(preset, secrets, max_retries=0).invoke("hi")
    assert classify_error(raised.value).kind == "transient"


def test_server_enforces_tool_history_like_the_real_api(secrets: SecretsStore) -> None:
    dangling = AIMessage("", tool_calls=[{"id": "call_x", "name": "add", "args": {"a": 1}}])
    with OpenAIServer([Reply(text="unreached")]) as server:
        model = build_chat_model(make_preset(server), secrets, max_retries=0)
        with pytest.raises(openai.BadRequestError) as raised:
            model.invoke([HumanMessage("hi"), dangling])
    error = classify_error(raised.value)
    assert error.kind == "bad_request"
    assert "did not have response messages: call_x" in error.message


# presets that cannot be built ----------------------------------------------------------------


def test_missing_key_names_preset_and_secret(tmp_path: Path) -> None:
    empty = SecretsStore(tmp_path / "empty")
    preset = ModelPreset(
        name="ds", provider="deepseek", model="deepseek-chat", api_key_secret="deepseek_api_key"
    )
    with pytest.raises(ProviderConfigError) as raised:
        build_chat_model(preset, empty)
    assert "'ds'" in str(raised.value) and "'deepseek_api_key'" in str(raised.value)
    assert classify_error(raised.value).pauses_dispatch


@pytest.mark.parametrize(
    "preset",
    [
        ModelPreset(name="off", provider="offline", model="offline-playbook"),
        ModelPreset(name="q", provider="qwen", model="qwen3.8-flash", api_key_secret="test_key"),
        ModelPreset(name="o", provider="openai", model="gpt-5.1"),
    ],
    ids=["offline", "no-base-url", "no-key-secret"],
)
def test_unbuildable_presets(secrets: SecretsStore, preset: ModelPreset) -> None:
    with pytest.raises(ProviderConfigError, match=f"model preset '{preset.name}'"):
        build_chat_model(preset, secrets)


def test_keyless_local_server_never_gets_the_environment_key(
    secrets: SecretsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-must-not-leave-1234")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with OpenAIServer([Reply(text="ok")], api_key="EMPTY") as server:
        preset = ModelPreset(
            name="vllm", provider="openai_compatible", model="m", base_url=server.base_url
        )
        assert build_chat_model(preset, secrets).invoke("hi").text == "ok"
    assert server.requests[0].auth_ok is True


# test connection -----------------------------------------------------------------------------


async def test_connection_ok(secrets: SecretsStore) -> None:
    reply = Reply(text="ok", model="scripted-model-2026-11", usage=Usage(9, 1))
    async with OpenAIServer([reply], api_key=KEY) as server:
        report = await check_connection(make_preset(server, "deepseek"), secrets)
    assert report.ok and report.error is None
    assert report.model == "scripted-model-2026-11"
    assert report.reply == "ok"
    assert report.latency_ms is not None and report.latency_ms > 0
    assert report.usage is not None and (report.usage.input_tokens, report.usage.total) == (9, 10)
    body = server.chat_bodies[0]  # a DeepSeek call is not streamed (providers.streams)
    assert not body.get("stream") and "stream_options" not in body
    assert report.to_dict()["usage"]["output_tokens"] == 1


async def test_connection_reports_missing_usage_as_missing(secrets: SecretsStore) -> None:
    async with OpenAIServer([Reply(text="ok", usage=None)]) as server:
        report = await check_connection(make_preset(server), secrets)
    assert report.ok and report.usage is None
    assert "reported no token usage" in report.message


async def test_connection_failing_balance(secrets: SecretsStore) -> None:
    async with OpenAIServer([Fail(402, "Insufficient Balance")], api_key=KEY) as server:
        report = await check_connection(make_preset(server, "deepseek"), secrets)
    assert not report.ok and report.error is not None
    assert report.error.kind == "balance"
    assert report.message == "p: the account has no balance or quota left (HTTP 402): " + (
        "Insufficient Balance"
    )


async def test_connection_wrong_key_is_scrubbed(secrets: SecretsStore) -> None:
    async with OpenAIServer([], api_key="sk-the-right-one-000000") as server:
        report = await check_connection(make_preset(server), secrets)
    assert report.error is not None and report.error.kind == "auth"
    assert KEY not in str(report.to_dict())
    assert "***" in report.message


async def test_connection_missing_secret_sends_nothing(tmp_path: Path) -> None:
    async with OpenAIServer([Reply(text="ok")]) as server:
        report = await check_connection(make_preset(server), SecretsStore(tmp_path / "none"))
    assert report.error is not None and report.error.kind == "config"
    assert "test_key" in report.message and report.latency_ms is None
    assert server.requests == []


def test_models_endpoint_lists_and_checks_key() -> None:
    with OpenAIServer(api_key=KEY, models=["m1", "m2"]) as server:
        listed = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0).models.list()
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(
                base_url=server.base_url, api_key="wrong-key", max_retries=0
            ).models.list()
    assert [m.id for m in listed.data] == ["m1", "m2"]
    assert [r.auth_ok for r in server.requests] == [True, False]
