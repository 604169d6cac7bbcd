"""Approval modes through the real harness and scheduler, on an OpenAI-compatible stand-in (a
scripted team) and the lab's real evaluator: in `ask` a full simulation stops the turn in an
interrupt and the team waits (`awaiting_approval`, no turn running); an approval resumes the
same call, a rejection answers it with the person's reason, "remember" lets the next identical
call through; `read_only` blocks a write until a person decides; `auto` never asks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from justkernel.app import LabRuntime
from justkernel.core.approvals import ApprovalMode
from justkernel.core.reasons import ReasonCode
from justkernel.scheduler.scheduler import Scheduler, SchedulerConfig
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply, ToolCall, Usage

KEY = "sk-approvals-key-778899"
PLAN = {
    "failure_evidence": "none yet",
    "hypothesis": "the baseline is measured",
    "change": "none",
    "validation_criterion": "a receipt",
    "case_ids": [],
}
NOTE = "/scratch/plan-notes.md"


def _tool_messages(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body["messages"] if m["role"] == "tool"]


def _script(steps: list[ToolCall]) -> Callable[[dict[str, Any]], Reply]:
    """Each step after the last answered one; then done."""

    def reply(body: dict[str, Any]) -> Reply:
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
        if turns < len(steps):
            return Reply(tool_calls=[steps[turns]], usage=Usage(100, 10))
        return Reply(text="finished. [done]", usage=Usage(100, 5))

    return reply


async def _until(check: Callable[[], Awaitable[Any]], what: str, limit: float = 300.0) -> Any:
    """Poll generously (a loaded host is slow); fail naming what never happened."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while loop.time() < deadline:
        if value := await check():
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"never happened: {what}")


async def _start(
    runtime: LabRuntime, server: OpenAIServer, name: str, mode: ApprovalMode
) -> tuple[Scheduler, str, str, asyncio.Task[str]]:
    runtime.presets["scripted"] = scripted_preset(server.base_url)
    run = await runtime.lab.runs.create(name)
    scheduler = runtime.scheduler(run.id, SchedulerConfig(model_calls=1))
    team = await scheduler.add_team("scripted")
    await scheduler.approvals.set_mode(run.id, team.id, mode, by="test")
    return scheduler, run.id, team.id, asyncio.create_task(scheduler.run(seconds=600))


async def _tool_results(runtime: LabRuntime, run_id: str, name: str) -> list[dict[str, Any]]:
    events = await runtime.lab.events.read(run_id, kinds=["tool.result"])
    return [e.payload for e in events if e.payload.get("name") == name]


async def test_ask_waits_for_a_full_simulation_then_approve_and_remember(
    runtime: LabRuntime,
) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    steps = [
        ToolCall("record_experiment_plan", PLAN),
        ToolCall("simulate_kernel", {"mode": "full"}),
        ToolCall("record_experiment_plan", {**PLAN, "hypothesis": "the same again"}),
        ToolCall("simulate_kernel", {"mode": "full"}),
    ]
    async with OpenAIServer(_script(steps), api_key=KEY) as server:
        scheduler, run_id, team_id, task = await _start(runtime, server, "ask", ApprovalMode.ASK)
        desk = scheduler.approvals
        (card,) = await _until(lambda: desk.pending(run_id), "a card for the simulation")
        assert (card.tool, card.kind, card.args, card.mode) == (
            "simulate_kernel",
            "full",
            {"mode": "full"},
            "ask",
        )

        async def waiting() -> bool:
            team = await runtime.lab.teams.get(run_id, team_id)
            return team.status == "awaiting_approval" and team_id not in scheduler._running

        await _until(waiting, "the team waits with no turn running")
        assert await _tool_results(runtime, run_id, "simulate_kernel") == []  # it did not run
        (open_plan,) = await runtime.lab.experiments.list(run_id, team_id)
        assert open_plan.status == "planned"

        await desk.decide(card.id, approve=True, remember=True, by="ana", reason="go ahead")
        assert (await asyncio.wait_for(task, 600)).code == ReasonCode.NO_WORK
        assert not server.handler_errors

    plans = await runtime.lab.experiments.list(run_id, team_id)
    assert [p.status for p in plans] == ["measured", "measured"]  # both simulations ran
    assert len(await _tool_results(runtime, run_id, "simulate_kernel")) == 2
    # the second identical call passed under the grant: one card in all
    assert [r.id for r in await desk.requests(run_id)] == [card.id]
    (grant,) = await desk.grants(run_id, team_id)
    assert (grant.tool, grant.kind, grant.request_id) == ("simulate_kernel", "full", card.id)
    ends = await runtime.lab.events.read(run_id, kinds=["team.turn_end"])
    assert "awaiting_approval" in [e.payload["status"] for e in ends]


async def test_a_rejection_answers_the_call_with_the_reason(runtime: LabRuntime) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    steps = [ToolCall("record_experiment_plan", PLAN), ToolCall("simulate_kernel", {})]
    async with OpenAIServer(_script(steps), api_key=KEY) as server:
        scheduler, run_id, team_id, task = await _start(runtime, server, "rej", ApprovalMode.ASK)
        desk = scheduler.approvals
        (card,) = await _until(lambda: desk.pending(run_id), "a card for the simulation")
        await desk.decide(card.id, approve=False, by="ana", reason="probe it first")
        assert (await asyncio.wait_for(task, 600)).code == ReasonCode.NO_WORK
        answered = [t for b in server.chat_bodies for t in _tool_messages(b)]

    (plan,) = await runtime.lab.experiments.list(run_id, team_id)
    assert plan.status == "planned"  # the simulation never ran
    rejection = next(t for t in answered if "rejected by a person" in t)
    assert "ana" in rejection and "probe it first" in rejection and card.id in rejection
    assert 'simulate_kernel(mode=\\"probe\\")' in json.dumps(rejection)  # what to do next
    (result,) = await _tool_results(runtime, run_id, "simulate_kernel")
    assert result["error"] is True
    assert await desk.grants(run_id) == []


async def test_read_only_blocks_a_write_until_a_person_decides(runtime: LabRuntime) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    steps = [
        ToolCall("read_file", {"file_path": "/spec.md"}),
        ToolCall("record_experiment_plan", PLAN),
        ToolCall("write_file", {"file_path": NOTE, "content": "a note\n"}),
    ]
    async with OpenAIServer(_script(steps), api_key=KEY) as server:
        scheduler, run_id, team_id, task = await _start(
            runtime, server, "read only", ApprovalMode.READ_ONLY
        )
        desk = scheduler.approvals
        (card,) = await _until(lambda: desk.pending(run_id), "a card for the write")
        assert (card.tool, card.args) == ("write_file", {"file_path": NOTE, "content": "a note\n"})
        team = await runtime.lab.teams.get(run_id, team_id)
        assert not (team.workspace / NOTE.lstrip("/")).exists()
        # the read and the plan passed without asking
        assert len(await runtime.lab.experiments.list(run_id, team_id)) == 1
        await desk.decide(card.id, approve=False, by="ana", reason=None)
        assert (await asyncio.wait_for(task, 600)).code == ReasonCode.NO_WORK
        answered = [t for b in server.chat_bodies for t in _tool_messages(b)]
    assert not (team.workspace / NOTE.lstrip("/")).exists()
    assert any("rejected by a person" in t and "read-only" in t for t in answered)


async def test_auto_never_asks(runtime: LabRuntime) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    steps = [
        ToolCall("write_file", {"file_path": NOTE, "content": "a note\n"}),
        ToolCall("send_message", {"to": "all", "text": "hello"}),
    ]
    async with OpenAIServer(_script(steps), api_key=KEY) as server:
        scheduler, run_id, team_id, task = await _start(runtime, server, "auto", ApprovalMode.AUTO)
        assert (await asyncio.wait_for(task, 600)).code == ReasonCode.NO_WORK
    team = await runtime.lab.teams.get(run_id, team_id)
    assert (team.workspace / NOTE.lstrip("/")).read_text() == "a note\n"
    assert await scheduler.approvals.requests(run_id) == []
