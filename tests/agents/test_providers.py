"""Model providers through a real ChatOpenAI against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    message_chunk_to_message,
)
from langchain_core.tools import tool

from justkernel.agents.errors import classify_error
from justkernel.agents.providers import build_chat_model
from justkernel.agents.usage import UsageCallback, UsageRecord, usage_from_message
from justkernel.settings.models import ModelPreset
from justkernel.settings.secrets import SecretsStore
from tests.support.openai_server import OpenAIServer, Reply, ToolCall, Usage

KEY = "sk-jk-test-Zq8v3Lm1Xw7Rt5NyP4"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def secrets(tmp_path: Path) -> SecretsStore:
    store = SecretsStore(tmp_path / "config")
    store.set("test_key", KEY)
    return store


def make_preset(server: OpenAIServer, provider: str = "openai_compatible", **extra) -> ModelPreset:
    fields = {"model": "scripted-model", "api_key_secret": "test_key", **extra}
    return ModelPreset(name="p", provider=provider, base_url=server.base_url, **fields)


def run_tools(message: AIMessage) -> list[BaseMessage]:
    """The tool results for a model turn, as an agent loop would append them."""
    return [add.invoke(call) for call in message.tool_calls]


async def ask(model, messages: list[BaseMessage], stream: bool) -> AIMessage:
    if not stream:
        return await model.ainvoke(messages)
    merged: AIMessageChunk | None = None
    async for chunk in model.astream(messages):
        merged = chunk if merged is None else merged + chunk
    assert merged is not None
    message = message_chunk_to_message(merged)
    assert isinstance(message, AIMessage)
    return message


def test_plain_answer_sends_key_as_bearer_and_nothing_unset(secrets: SecretsStore) -> None:
    with OpenAIServer([Reply(text="hello there")], api_key=KEY) as server:
        model = build_chat_model(make_preset(server), secrets, max_retries=0)
        answer = model.invoke("hi")
    assert answer.text == "hello there"
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.auth_ok is True
    assert "authorization" not in request.headers
    body = request.body
    assert body is not None
    assert body["model"] == "scripted-model"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    for unset in ("reasoning_effort", "max_tokens", "max_completion_tokens", "temperature"):
        assert unset not in body


@pytest.mark.parametrize(
    ("provider", "limit_key"),
    [("openai", "max_completion_tokens"), ("deepseek", "max_tokens"), ("qwen", "max_tokens")],
)
def test_reasoning_effort_and_output_limit_sent_when_set(
    secrets: SecretsStore, provider: str, limit_key: str
) -> None:
    with OpenAIServer([Reply(text="ok")]) as server:
        preset = make_preset(server, provider, reasoning_effort="low", max_output_tokens=321)
        build_chat_model(preset, secrets).invoke("hi")
    body = server.chat_bodies[0]
    assert body["reasoning_effort"] == "low"
    assert body[limit_key] == 321
    other = {"max_tokens", "max_completion_tokens"} - {limit_key}
    assert other.isdisjoint(body)


@pytest.mark.parametrize(
    ("provider", "reported"),
    [
        ("openai", "openai"),
        ("deepseek", "deepseek"),
        ("qwen", "qwen"),
        ("openai_compatible", "openai"),
    ],
)
def test_provider_reported_for_harness_profiles(
    secrets: SecretsStore, provider: str, reported: str
) -> None:
    preset = ModelPreset(
        name="p",
        provider=provider,
        model="m",
        base_url="http://127.0.0.1:9/v1",
        api_key_secret="test_key",
    )
    assert build_chat_model(preset, secrets)._get_ls_params()["ls_provider"] == reported


def test_codex_named_model_still_uses_chat_completions(secrets: SecretsStore) -> None:
    with OpenAIServer([Reply(text="ok")]) as server:
        preset = make_preset(server, "openai", model="gpt-5.1-codex")
        assert build_chat_model(preset, secrets).invoke("hi").text == "ok"
    assert [r.path for r in server.requests] == ["/v1/chat/completions"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_tool_call_round_trip(secrets: SecretsStore, stream: bool) -> None:
    script = [
        Reply(
            tool_calls=[
                ToolCall("add", {"a": 2, "b": 3}, id="call_a"),
                ToolCall("add", {"a": 10, "b": 20}, id="call_b"),
            ],
            chunk_chars=3,
            usage=Usage(40, 18),
        ),
        Reply(text="2+3=5 and 10+20=30", usage=Usage(70, 9)),
    ]
    async with OpenAIServer(script, api_key=KEY) as server:
        model = build_chat_model(make_preset(server), secrets, max_retries=0).bind_tools([add])
        history: list[BaseMessage] = [HumanMessage("add 2+3 and 10+20")]
        first = await ask(model, history, stream)
        assert [(c["id"], c["name"], c["args"]) for c in first.tool_calls] == [
            ("call_a", "add", {"a": 2, "b": 3}),
            ("call_b", "add", {"a": 10, "b": 20}),
        ]
        history += [first, *run_tools(first)]
        final = await ask(model, history, stream)
    assert final.text == "2+3=5 and 10+20=30"
    first_body, second_body = server.chat_bodies
    assert first_body.get("stream", False) is stream
    assert first_body["tools"][0]["function"]["name"] == "add"
    if stream:
        assert first_body["stream_options"] == {"include_usage": True}
    assistant, tool_a, tool_b = second_body["messages"][1:]
    assert [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]] == [
        {"a": 2, "b": 3},
        {"a": 10, "b": 20},
    ]
    assert (tool_a["tool_call_id"], tool_a["content"]) == ("call_a", "5")
    assert (tool_b["tool_call_id"], tool_b["content"]) == ("call_b", "30")
    assert [usage_from_message(make_preset(server), m).total for m in (first, final)] == [58, 79]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_usage_record_matches_server_report(secrets: SecretsStore, stream: bool) -> None:
    usage = Usage(
        prompt_tokens=1200, completion_tokens=300, reasoning_tokens=120, cached_tokens=800
    )
    async with OpenAIServer([Reply(text="ok", usage=usage, model="echoed-model-2")]) as server:
        preset = make_preset(server, input_price_per_mtok=2.0, output_price_per_mtok=8.0)
        records: list[UsageRecord] = []
        model = build_chat_model(preset, secrets)
        message = await ask(
            model.with_config(callbacks=[UsageCallback(preset, records.append)]),
            [HumanMessage("hi")],
            stream,
        )
    record = usage_from_message(preset, message)
    assert records == [record]
    assert record == UsageRecord(
        preset="p",
        model="echoed-model-2",
        input_tokens=1200,
        output_tokens=300,
        total=1500,
        reasoning_tokens=120,
        cached_input_tokens=800,
        cost_usd=pytest.approx((1200 * 2.0 + 300 * 8.0) / 1e6),
    )


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_unpriced_and_unreported_usage_are_missing_not_zero(
    secrets: SecretsStore, stream: bool
) -> None:
    async with OpenAIServer([Reply(text="a"), Reply(text="b", usage=None)]) as server:
        preset = make_preset(server, input_price_per_mtok=1.0)  # output price unset → unpriced
        model = build_chat_model(preset, secrets)
        priced = usage_from_message(preset, await ask(model, [HumanMessage("x")], stream))
        unreported = usage_from_message(preset, await ask(model, [HumanMessage("y")], stream))
    assert priced is not None and priced.input_tokens == 12 and priced.cost_usd is None
    assert priced.reasoning_tokens is None
    assert unreported is None


def test_key_never_in_repr_errors_or_logs(
    secrets: SecretsStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with OpenAIServer([Reply(text="never")], api_key="sk-some-other-key-123456") as server:
        model = build_chat_model(make_preset(server), secrets, max_retries=0)
        with pytest.raises(Exception) as raised:
            model.invoke("hi")
    assert server.requests[0].auth_ok is False
    # the server echoes the key it was sent (as some providers do); classification scrubs it
    assert KEY in str(raised.value)
    error = classify_error(raised.value)
    assert (error.kind, error.status, error.code) == ("auth", 401, "invalid_api_key")
    assert error.pauses_dispatch
    assert "Incorrect API key provided: ***" in error.message
    for text in (error.message, repr(error), repr(model), str(model), caplog.text):
        assert KEY not in text
    assert "Authorization" not in json.dumps([r.headers for r in server.requests])


def test_scripted_mode_serves_a_tool_session_from_a_handler(secrets: SecretsStore) -> None:
    def handler(body: dict) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Reply(text=f"the sum is {last['content']}")
        return Reply(tool_calls=[ToolCall("add", {"a": 40, "b": 2})])

    with OpenAIServer(handler, api_key=KEY) as server:
        model = build_chat_model(make_preset(server), secrets).bind_tools([add])
        history: list[BaseMessage] = [HumanMessage("40+2?")]
        first = model.invoke(history)
        history += [first, *run_tools(first)]
        assert model.invoke(history).text == "the sum is 42"
    assert first.tool_calls[0]["id"] == "call_0_0"
    assert server.handler_errors == []
