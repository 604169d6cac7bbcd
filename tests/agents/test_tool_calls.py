"""Tool calls as a compatible server really sends them, through the real harness and scheduler
against the OpenAI-compatible stand-in: ids numbered per response (`call_0`, `call_1`, ... in
every response, as some servers do) and arguments that are not JSON."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from justkernel.app import LabRuntime
from justkernel.scheduler.scheduler import SchedulerConfig
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply, ToolCall

KEY = "sk-tool-calls-key-0007"

PLAN = {
    "failure_evidence": "no receipt yet",
    "hypothesis": "the baseline is correct",
    "change": "none: measure the baseline",
    "validation_criterion": "every local case passes",
    "case_ids": ["c15_small_bcast_f32"],
}


def _tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _per_response_ids(body: dict[str, Any]) -> Reply:
    """Two experiments (a plan and a full simulation, which closes it; a new plan and a probe),
    every response numbering its calls from call_0; the step follows from the turns so far."""
    steps = [
        [
            ToolCall("record_experiment_plan", PLAN, id="call_0"),
            ToolCall("list_local_cases", {}, id="call_1"),
        ],
        [ToolCall("simulate_kernel", {"mode": "full"}, id="call_0")],
        [ToolCall("record_experiment_plan", {**PLAN, "hypothesis": "again"}, id="call_0")],
        [ToolCall("simulate_kernel", {"mode": "probe"}, id="call_0")],
    ]
    answered = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if answered < len(steps):
        return Reply(tool_calls=steps[answered])
    return Reply(text="Both experiments measured. [done]")


async def _events(runtime: LabRuntime, run_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [(e.kind, e.payload) async for e in runtime.lab.events.iter_all(run_id)]


async def test_ids_repeated_across_responses_are_made_unique(runtime: LabRuntime) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    async with OpenAIServer(_per_response_ids, api_key=KEY, check_tool_history=True) as srv:
        runtime.presets["scripted"] = scripted_preset(srv.base_url)
        run = await runtime.lab.runs.create("per-response ids")
        scheduler = runtime.scheduler(run, SchedulerConfig())
        team = await scheduler.add_team("scripted")
        await scheduler.run(seconds=120)
        last = srv.chat_bodies[-1]
    assert not srv.handler_errors
    results = [json.loads(r) for r in _tool_results(last) if r.startswith("{")]
    plans = [r for r in results if r.get("status") == "recorded"]
    assert [p["experiment"] for p in plans] == [1, 2]
    assert not [r for r in results if "error" in r], results
    experiments = await scheduler.experiments.list(run.id, team.id)
    assert [(e.number, e.status) for e in experiments] == [(1, "measured"), (2, "planned")]
    events = await _events(runtime, run.id)
    assert [p["experiment"] for k, p in events if k == "experiment.planned"] == [1, 2]
    assert [p["experiment"] for k, p in events if k == "experiment.receipt"] == [1, 2]
    calls = [p["id"] for k, p in events if k == "tool.call"]
    answered = [p["id"] for k, p in events if k == "tool.result"]
    assert len(calls) == 5 and len(set(calls)) == 5 and sorted(answered) == sorted(calls)
    # the ids the model saw are the ids the tools and the events saw
    sent = [c["id"] for m in last["messages"] for c in m.get("tool_calls") or []]
    assert sent == calls


def _malformed_then_fixed(body: dict[str, Any]) -> Reply:
    results = _tool_results(body)
    if not results:
        return Reply(
            tool_calls=[ToolCall("record_experiment_plan", '{"hypothesis": not json', id="bad")]
        )
    if len(results) == 1:
        return Reply(tool_calls=[ToolCall("record_experiment_plan", PLAN, id="good")])
    return Reply(text="[done]")


async def test_a_malformed_tool_call_is_logged_and_answered_with_the_parse_error(
    runtime: LabRuntime,
) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    async with OpenAIServer(_malformed_then_fixed, api_key=KEY, check_tool_history=True) as srv:
        runtime.presets["scripted"] = scripted_preset(srv.base_url)
        run = await runtime.lab.runs.create("malformed call")
        scheduler = runtime.scheduler(run, SchedulerConfig())
        await scheduler.add_team("scripted")
        await scheduler.run(seconds=60)
        bodies = srv.chat_bodies
    assert not srv.handler_errors
    # the model is answered in the same turn (no "Continue" prompt in between), with why
    second = bodies[1]["messages"]
    assert [m["role"] for m in second[-2:]] == ["assistant", "tool"]
    answer = second[-1]["content"]
    assert second[-1]["tool_call_id"] == "bad"
    assert "not valid JSON" in answer and "record_experiment_plan" in answer
    assert '"hypothesis"' in answer  # the schema the arguments must match
    events = await _events(runtime, run.id)
    call = next(p for k, p in events if k == "tool.call" and p["id"] == "bad")
    assert call["name"] == "record_experiment_plan" and "not json" in call["args"]
    result = next(p for k, p in events if k == "tool.result" and p["id"] == "bad")
    assert result["error"] is True and "not valid JSON" in result["content"]
    turns = [p for k, p in events if k == "team.turn"]
    assert len(turns) == 1  # one turn: plan corrected without the scheduler's Continue


class _Request:
    """What the middleware reads of a model request: the tools offered and the state."""

    def __init__(self, history: list[Any]) -> None:
        self.tools: list[Any] = []
        self.state = {"messages": history}
        self.runtime = None  # a seat built for one team needs no bound team


async def test_a_members_ids_never_repeat_across_its_tasks() -> None:
    """A member's thread starts afresh at each `task`, so call_0 of its second task is not in
    its history, yet the team's plans and events already hold it: a member's ids are always
    made unique; the team's own ids change only when its history holds them."""
    from langchain.agents.middleware.types import ModelResponse
    from langchain_core.messages import AIMessage

    from justkernel.agents.middleware import Seat, TeamSignals
    from justkernel.agents.middleware.tool_calls import ToolCallsMiddleware
    from tests.support.labs import scripted_preset

    def reply() -> AIMessage:
        return AIMessage(
            content="", tool_calls=[{"name": "list_local_cases", "args": {}, "id": "call_0"}]
        )

    async def handler(_request: Any) -> ModelResponse:
        return ModelResponse(result=[reply()])

    ctx = SimpleNamespace(run_id="run", team_id="team-001")
    team = Seat(ctx, scripted_preset("http://127.0.0.1:9"), "openai_compatible", TeamSignals())  # type: ignore[arg-type]
    analyst = team.for_member("analyst", team.preset, team.provider)
    seen = []
    for _task in range(2):  # two tasks: each a fresh thread
        response = await ToolCallsMiddleware(analyst).awrap_model_call(_Request([]), handler)  # type: ignore[arg-type]
        seen.append(response.result[0].tool_calls[0]["id"])
    assert len(set(seen)) == 2 and "call_0" not in seen
    fresh = await ToolCallsMiddleware(team).awrap_model_call(_Request([]), handler)  # type: ignore[arg-type]
    assert fresh.result[0].tool_calls[0]["id"] == "call_0"  # nothing to collide with
    again = await ToolCallsMiddleware(team).awrap_model_call(_Request([reply()]), handler)  # type: ignore[arg-type]
    assert again.result[0].tool_calls[0]["id"] != "call_0"
