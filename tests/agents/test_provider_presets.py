"""Each shipped preset (models.toml: gpt, deepseek, qwen) in the request shape its provider
needs: built from the shipped preset with only its base URL pointed at the OpenAI-compatible
stand-in, which plays that provider's quirks (`PROVIDER_QUIRKS`: DeepSeek's string-only
content and reasoning passback, Qwen's stream-only thinking models and their tool-call chunks,
OpenAI's `max_completion_tokens` and no streaming for an unverified organisation), and one
tool-calling agent step run through the real harness and scheduler."""

from __future__ import annotations

import json
from typing import Any

import pytest

from justkernel.agents.provider_check import test_connection as check_connection
from justkernel.app import LabRuntime
from justkernel.scheduler.scheduler import SchedulerConfig
from justkernel.settings.models import ModelPreset, load_model_presets, provider_secret_name
from tests.support.openai_server import PROVIDER_QUIRKS, OpenAIServer, Reply, ToolCall, Usage

KEY = "sk-shipped-preset-key-7788"
THOUGHT = "The cases come first; list them."


def shipped(name: str, base_url: str, **extra: Any) -> ModelPreset:
    return load_model_presets()[name].model_copy(update={"base_url": base_url, **extra})


def one_tool_step(body: dict[str, Any]) -> Reply:
    """List the cases (one tool call, with the provider's thinking), then finish."""
    if not any(m["role"] == "tool" for m in body["messages"]):
        return Reply(
            tool_calls=[ToolCall("list_local_cases", {})],
            reasoning_content=THOUGHT,
            usage=Usage(900, 40, reasoning_tokens=12),
            chunk_chars=5,
        )
    return Reply(text="Cases listed. [done]", reasoning_content="Done.", usage=Usage(1200, 9))


async def run_preset(
    runtime: LabRuntime, name: str, **extra: Any
) -> tuple[OpenAIServer, list[tuple[str, dict[str, Any]]], str]:
    preset = load_model_presets()[name]
    runtime.lab.secrets.set(provider_secret_name(preset.provider), KEY)
    quirks = PROVIDER_QUIRKS[preset.provider]
    async with OpenAIServer(one_tool_step, api_key=KEY, **quirks) as server:
        runtime.presets[name] = shipped(name, server.base_url, **extra)
        run = await runtime.lab.runs.create(f"shipped {name}")
        scheduler = runtime.scheduler(run.id, SchedulerConfig())
        team = await scheduler.add_team(name)
        await scheduler.run(seconds=60)
        status = (await scheduler.registry.get(run.id, team.id)).status
    events = [(e.kind, e.payload) async for e in runtime.lab.events.iter_all(run.id)]
    return server, events, status


def assert_step_ran(
    server: OpenAIServer, events: list[tuple[str, dict[str, Any]]], status: str
) -> list[dict[str, Any]]:
    """Every request was accepted, the tool ran, both answers are recorded with their usage."""
    assert [r.status for r in server.requests] == [200, 200], [
        r.body and r.body.get("error") for r in server.requests
    ]
    results = [p for kind, p in events if kind == "tool.result"]
    assert [(p["name"], p["error"]) for p in results] == [("list_local_cases", False)]
    responses = [p for kind, p in events if kind == "model.response"]
    assert [(p["usage"]["input_tokens"], p["usage"]["output_tokens"]) for p in responses] == [
        (900, 40),
        (1200, 9),
    ]
    assert status == "done"
    bodies = server.chat_bodies
    for body in bodies:  # the system prompt (Deep Agents' text parts) goes out as one string
        system = [m for m in body["messages"] if m["role"] in ("system", "developer")]
        assert len(system) == 1 and isinstance(system[0]["content"], str)
        assert "\n\n" in system[0]["content"]  # the parts keep their separating blank line
    return bodies


async def test_deepseek_preset_sends_string_content_and_passes_reasoning_back(
    runtime: LabRuntime,
) -> None:
    server, events, status = await run_preset(runtime, "deepseek")
    first, second = assert_step_ran(server, events, status)
    assert first["model"] == "deepseek-chat" and not first.get("stream")
    for message in first["messages"] + second["messages"]:
        if message["role"] in ("system", "user", "tool"):
            assert isinstance(message["content"], str)
    # the reasoning came back on the tool-call turn (the stand-in checks it is the same)
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    assert assistant["reasoning_content"] == THOUGHT


async def test_qwen_preset_streams_and_keeps_usage_and_reasoning(runtime: LabRuntime) -> None:
    server, events, status = await run_preset(runtime, "qwen")
    first, _second = assert_step_ran(server, events, status)
    assert first["model"] == "qwen3.8-flash" and first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    assert first["reasoning_effort"] == "low"
    assert "max_tokens" not in first and "max_completion_tokens" not in first
    responses = [p for kind, p in events if kind == "model.response"]
    assert responses[0]["usage"]["reasoning_tokens"] == 12
    calls = responses[0]["tool_calls"]  # Qwen's chunks ("id": "" after the first) merged
    assert [(c["name"], json.loads(c["args"])) for c in calls] == [("list_local_cases", {})]
    assert calls[0]["id"]


async def test_gpt_preset_is_not_streamed_and_names_its_limit_for_openai(
    runtime: LabRuntime,
) -> None:
    server, events, status = await run_preset(runtime, "gpt", max_output_tokens=4096)
    first, _second = assert_step_ran(server, events, status)
    assert first["model"] == "gpt-5.1" and not first.get("stream")
    assert first["max_completion_tokens"] == 4096 and "max_tokens" not in first
    assert first["reasoning_effort"] == "medium"


@pytest.mark.parametrize("name", ["gpt", "deepseek", "qwen"])
async def test_connection_test_sends_the_agents_shape(runtime: LabRuntime, name: str) -> None:
    preset = load_model_presets()[name]
    runtime.lab.secrets.set(provider_secret_name(preset.provider), KEY)
    quirks = PROVIDER_QUIRKS[preset.provider]
    reply = Reply(text="ok", reasoning_content="fine", usage=Usage(9, 1))
    async with OpenAIServer([reply], api_key=KEY, **quirks) as server:
        report = await check_connection(shipped(name, server.base_url), runtime.lab.secrets)
    assert report.ok, report.message
    assert report.usage is not None and report.usage.total == 10
    assert bool(server.chat_bodies[0].get("stream")) is (name == "qwen")
