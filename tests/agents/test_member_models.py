"""A team's members run on the models chosen for them, through the real harness and real
OpenAI-compatible servers: the team's model on one stand-in (A), the analyst's on another (B).
Member calls are governed (budget, model-call limiter, provider pauses) and recorded like the
team's own, with the member named in the events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from justkernel.app import LabRuntime
from justkernel.core.reasons import ReasonCode
from justkernel.governance.budget import BudgetCaps
from justkernel.scheduler.scheduler import Scheduler, SchedulerConfig
from justkernel.settings.models import ModelPreset
from justkernel.store.teams import Team
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply, ToolCall, Usage

KEY_A = "sk-team-model-key-000111"
KEY_B = "sk-analyst-model-key-222333"
ANALYST_PROMPT = "You analyse receipts"
TEAM_PROMPT = "an engineering team optimizing"
QUESTION = "Where are the cycles lost?"
FINDING = "The baseline decodes indices with divisions: fuse the passes."


def _system(body: dict[str, Any]) -> str:
    return json.dumps([m for m in body["messages"] if m["role"] == "system"])


def _assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


def _team(body: dict[str, Any]) -> Reply:
    """The team's model: delegate to the analyst once, then finish."""
    if _assistant_turns(body) == 0:
        return Reply(
            tool_calls=[ToolCall("task", {"description": QUESTION, "subagent_type": "analyst"})],
            usage=Usage(400, 30),
        )
    return Reply(text="Analyst consulted. [done]", usage=Usage(500, 10))


def _analyst(body: dict[str, Any]) -> Reply:
    """The analyst's model: look at the cases (one tool call), then answer."""
    if _assistant_turns(body) == 0:
        return Reply(
            tool_calls=[ToolCall("list_local_cases", {}, id="call_analyst_cases")],
            usage=Usage(111, 22),
        )
    return Reply(text=FINDING, usage=Usage(222, 33))


def _team_preset(base_url: str) -> ModelPreset:
    return scripted_preset(base_url).model_copy(update={"model": "model-a"})


def _analyst_preset(base_url: str, **extra: Any) -> ModelPreset:
    return ModelPreset(
        name="analyst-b",
        provider="qwen",
        model="model-b",
        base_url=base_url,
        api_key_secret="analyst_key",
        **extra,
    )


@dataclass
class _Run:
    id: str
    scheduler: Scheduler
    team: Team
    team_server: OpenAIServer  # A
    analyst_server: OpenAIServer  # B


@asynccontextmanager
async def _member_run(
    runtime: LabRuntime,
    *,
    analyst: Callable[[dict[str, Any]], Reply] = _analyst,
    analyst_key: str = KEY_B,
    config: SchedulerConfig | None = None,
    **analyst_extra: Any,
) -> AsyncIterator[_Run]:
    """A team on stand-in A whose analyst is configured on stand-in B (members are off in the
    scheduler: naming a member model is enough to have them)."""
    runtime.lab.secrets.set("scripted_key", KEY_A)
    runtime.lab.secrets.set("analyst_key", analyst_key)
    async with (
        OpenAIServer(_team, api_key=KEY_A) as team_server,
        OpenAIServer(analyst, api_key=KEY_B) as analyst_server,
    ):
        runtime.presets["scripted"] = _team_preset(team_server.base_url)
        runtime.presets["analyst-b"] = _analyst_preset(analyst_server.base_url, **analyst_extra)
        run = await runtime.lab.runs.create("member models")
        scheduler = runtime.scheduler(run.id, config or SchedulerConfig())
        team = await scheduler.add_team(
            "scripted", config={"member_models": {"analyst": "analyst-b"}}
        )
        yield _Run(run.id, scheduler, team, team_server, analyst_server)


async def _events(runtime: LabRuntime, run_id: str) -> list[tuple[str, str | None, dict]]:
    return [(e.kind, e.team, e.payload) async for e in runtime.lab.events.iter_all(run_id)]


async def test_the_analyst_runs_on_its_own_model_and_is_recorded_apart(
    runtime: LabRuntime,
) -> None:
    async with _member_run(runtime) as run:
        await run.scheduler.run(seconds=60)
        team_bodies, analyst_bodies = run.team_server.chat_bodies, run.analyst_server.chat_bodies

    # the analyst's conversation reached B, with the analyst's prompt and the delegated task
    assert len(analyst_bodies) == 2
    for body in analyst_bodies:
        assert body["model"] == "model-b"
        assert ANALYST_PROMPT in _system(body)
        assert TEAM_PROMPT not in _system(body)
    first_user = next(m for m in analyst_bodies[0]["messages"] if m["role"] == "user")
    assert QUESTION in json.dumps(first_user)
    # the team's own calls reached A, never with the analyst's prompt
    assert len(team_bodies) == 2
    for body in team_bodies:
        assert body["model"] == "model-a"
        assert TEAM_PROMPT in _system(body)
        assert ANALYST_PROMPT not in _system(body)
    task_result = next(m for m in team_bodies[-1]["messages"] if m["role"] == "tool")
    assert FINDING in task_result["content"]

    events = await _events(runtime, run.id)
    responses = [p for kind, t, p in events if kind == "model.response" and t == run.team.id]
    by_member = {
        member: [
            (p["provider"], p["preset"], p["model"]) for p in responses if p["member"] == member
        ]
        for member in (None, "analyst")
    }
    assert by_member[None] == [("openai_compatible", "scripted", "model-a")] * 2
    assert by_member["analyst"] == [("qwen", "analyst-b", "model-b")] * 2
    analyst_usage = [
        (p["usage"]["input_tokens"], p["usage"]["output_tokens"])
        for p in responses
        if p["member"] == "analyst"
    ]
    assert analyst_usage == [(111, 22), (222, 33)]  # what B reported
    # the analyst's tool call is in the log, as the analyst's
    calls = [(p["name"], p["member"]) for kind, _, p in events if kind == "tool.call"]
    assert ("task", None) in calls and ("list_local_cases", "analyst") in calls
    results = [p for kind, _, p in events if kind == "tool.result" and p["member"] == "analyst"]
    assert results and "c01_row_f32" in results[0]["content"]
    # the budget counted each call against the provider that served it
    spend = run.scheduler.governance.budget.providers
    assert spend["qwen"].tokens == 111 + 22 + 222 + 33
    assert spend["openai_compatible"].tokens == 400 + 30 + 500 + 10
    assert (await run.scheduler.registry.get(run.id, run.team.id)).status == "done"


async def test_a_member_with_the_offline_preset_runs_on_the_teams_model(
    runtime: LabRuntime,
) -> None:
    def both(body: dict[str, Any]) -> Reply:
        if ANALYST_PROMPT in _system(body):
            return Reply(text=FINDING, usage=Usage(50, 5))
        return _team(body)

    runtime.lab.secrets.set("scripted_key", KEY_A)
    async with OpenAIServer(both, api_key=KEY_A) as server:
        runtime.presets["scripted"] = _team_preset(server.base_url)
        run = await runtime.lab.runs.create("offline member")
        scheduler = runtime.scheduler(run.id, SchedulerConfig())
        team = await scheduler.add_team(
            "scripted", config={"member_models": {"analyst": "offline"}}
        )
        await scheduler.run(seconds=60)
        bodies = server.chat_bodies

    assert sum(ANALYST_PROMPT in _system(b) for b in bodies) == 1
    assert all(b["model"] == "model-a" for b in bodies)
    events = await _events(runtime, run.id)
    analyst = [p for kind, _, p in events if kind == "model.response" and p["member"] == "analyst"]
    assert [(p["provider"], p["preset"], p["offline"]) for p in analyst] == [
        ("openai_compatible", "scripted", False)
    ]
    assert (await scheduler.registry.get(run.id, team.id)).status == "done"


async def test_a_paused_member_provider_stops_the_member_not_the_team_provider(
    runtime: LabRuntime,
) -> None:
    async with _member_run(runtime) as run:
        run.scheduler.governance.limiter.pause("analyst-b", "balance exhausted")  # its preset
        await run.scheduler.run(seconds=60)
        served = len(run.analyst_server.requests)

    assert served == 0  # the member's call never left: the limiter refused it a slot
    stored = await run.scheduler.registry.get(run.id, run.team.id)
    assert stored.status == "paused"
    assert (stored.status_reason or "").startswith("provider analyst-b paused")


async def test_a_member_auth_error_pauses_the_member_provider(runtime: LabRuntime) -> None:
    async with _member_run(runtime, analyst_key="sk-wrong-analyst-key-999888") as run:
        await run.scheduler.run(seconds=60)

    events = await _events(runtime, run.id)
    errors = [p for kind, _, p in events if kind == "model.error"]
    assert errors and errors[0]["member"] == "analyst" and errors[0]["provider"] == "qwen"
    assert errors[0]["kind"] == "auth"
    paused = [p for kind, _, p in events if kind == "provider.paused"]
    assert [(p["provider"], p["connection"]) for p in paused] == [("qwen", "analyst-b")]
    limiter = run.scheduler.governance.limiter  # the member's connection, not the team's
    assert "analyst-b" in limiter.paused and "scripted" not in limiter.paused
    assert "sk-wrong-analyst-key" not in json.dumps(errors + paused)


async def test_a_member_call_that_would_cross_the_team_cap_pauses_the_team(
    runtime: LabRuntime,
) -> None:
    # the team's model is unpriced; any analyst call reserves at least 1000 output tokens at
    # 100 USD per Mtok = 0.1 USD, over the team's cap
    config = SchedulerConfig(caps=BudgetCaps(team_cost_usd=0.05))
    priced = {"input_price_per_mtok": 100.0, "output_price_per_mtok": 100.0}
    async with _member_run(runtime, config=config, max_output_tokens=1000, **priced) as run:
        await run.scheduler.run(seconds=60)
        served = len(run.analyst_server.requests)

    assert served == 0
    stored = await run.scheduler.registry.get(run.id, run.team.id)
    assert stored.status == "paused" and (stored.status_reason or "").startswith("budget")


async def test_the_watchdog_counts_member_responses_and_pauses_the_team_once(
    runtime: LabRuntime,
) -> None:
    def reader(body: dict[str, Any]) -> Reply:
        return Reply(tool_calls=[ToolCall("read_file", {"file_path": "/spec.md", "limit": 5})])

    async with _member_run(runtime, analyst=reader) as run:
        await run.scheduler.run(seconds=120)
        team_bodies, analyst_bodies = run.team_server.chat_bodies, run.analyst_server.chat_bodies

    # 1 team response + 23 analyst responses = 24: the pause; the nudge at 12 reached the analyst
    assert len(team_bodies) == 1 and len(analyst_bodies) == 23
    assert "Watchdog" in json.dumps(analyst_bodies[11]["messages"][-1])
    events = await _events(runtime, run.id)
    paused = [p["reason"] for kind, _, p in events if kind == "team.paused"]
    assert len(paused) == 1 and paused[0].startswith("no progress")
    stored = await run.scheduler.registry.get(run.id, run.team.id)
    assert stored.status == "paused" and (stored.status_reason or "").startswith("no progress")


async def test_an_unknown_member_preset_is_refused_naming_the_role_and_preset(
    runtime: LabRuntime,
) -> None:
    run = await runtime.lab.runs.create("unknown member")
    scheduler = runtime.scheduler(run.id, SchedulerConfig())
    with pytest.raises(ValueError, match="member 'reviewer': unknown model preset 'no-such'"):
        await scheduler.add_team("offline", config={"member_models": {"reviewer": "no-such"}})
    with pytest.raises(ValueError, match="unknown member role 'critic'"):
        await scheduler.add_team("offline", config={"member_models": {"critic": "offline"}})

    # a preset that disappears later (models.local.toml edited between runs) is refused when
    # the team's runtime is built, and the team is paused with that reason
    runtime.presets["later-gone"] = runtime.presets["offline"].model_copy(
        update={"name": "later-gone"}
    )
    team = await scheduler.add_team("offline", config={"member_models": {"analyst": "later-gone"}})
    del runtime.presets["later-gone"]
    with pytest.raises(ValueError, match="member 'analyst': unknown model preset 'later-gone'"):
        await scheduler._runtime(team)
    reason = await scheduler.run(seconds=30)
    stored = await scheduler.registry.get(run.id, team.id)
    assert stored.status == "paused"
    assert "member 'analyst': unknown model preset 'later-gone'" in (stored.status_reason or "")
    assert reason.code == ReasonCode.NO_WORK
