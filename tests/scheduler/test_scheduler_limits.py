"""The scheduler's limits through the real harness and a real OpenAI-compatible server:
the stall watchdog, provider errors, the cost cap, and tools that cannot leave the workspace."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from justkernel.app import LabRuntime
from justkernel.core.events.runs import DispatchStarted
from justkernel.core.reasons import ReasonCode
from justkernel.governance.budget import BudgetCaps
from justkernel.scheduler.scheduler import ProviderNotPaused, SchedulerConfig
from justkernel.settings.config import Settings
from tests.support.cli import run_cli
from tests.support.openai_server import Reply, ToolCall, Usage
from tests.support.scripted_run import scripted_run

KEY = "sk-scripted-test-key-000111"
WRONG_KEY = "sk-wrong-key-999888777"


def _assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


async def _kinds(runtime: LabRuntime, run_id: str) -> list[tuple[str, str | None, dict]]:
    return [(e.kind, e.team, e.payload) async for e in runtime.lab.events.iter_all(run_id)]


async def test_a_model_that_only_reads_is_nudged_at_12_and_paused_at_24(
    runtime: LabRuntime,
) -> None:
    def reader(body: dict[str, Any]) -> Reply:
        return Reply(tool_calls=[ToolCall("read_file", {"file_path": "/spec.md", "limit": 5})])

    async with scripted_run(runtime, "watchdog", reader, key=KEY) as arranged:
        reason = await arranged.scheduler.run(seconds=120)
    run, scheduler, team, server = arranged.run, arranged.scheduler, arranged.team, arranged.server

    events = await _kinds(runtime, run.id)
    responses = [i for i, (kind, *_) in enumerate(events) if kind == "model.response"]
    nudge = next(i for i, (kind, *_) in enumerate(events) if kind == "watchdog.nudge")
    assert len([i for i in responses if i < nudge]) == 12
    assert len(responses) == 24
    paused = [p for kind, _, p in events if kind == "team.paused"]
    assert paused and paused[0]["reason"].startswith("no progress")
    assert paused[0]["reason_code"] == "watchdog" and paused[0]["reason_params"] == {}
    stored = await scheduler.registry.get(run.id, team.id)
    assert stored.status == "paused" and stored.status_reason.startswith("no progress")
    assert reason.code == ReasonCode.NO_WORK
    # the nudge reached the model as a message
    assert any("Watchdog" in json.dumps(b) for b in server.chat_bodies[12:13])


async def test_a_401_pauses_dispatch_for_the_provider_with_the_reason(
    runtime: LabRuntime,
) -> None:
    never = [Reply(text="never served")]
    async with scripted_run(
        runtime, "auth error", never, key=KEY, lab_key=WRONG_KEY, teams=2
    ) as arranged:
        run, scheduler, (team_a, team_b) = arranged.run, arranged.scheduler, arranged.teams
        reason = await scheduler.run(seconds=60)
        requests_made = len(arranged.server.requests)

    events = await _kinds(runtime, run.id)
    paused_provider = [p for kind, _, p in events if kind == "provider.paused"]
    assert paused_provider and paused_provider[0]["kind"] == "auth"
    assert "sk-wrong-key" not in json.dumps(paused_provider)
    for team in (team_a, team_b):
        stored = await scheduler.registry.get(run.id, team.id)
        assert stored.status == "paused"
        assert "provider scripted paused" in (stored.status_reason or "")  # the connection
    assert reason.code == ReasonCode.NO_WORK
    assert requests_made <= 2  # one failing call per team at most, then nothing is dispatched
    # resuming is one action: the teams are eligible again
    resumed = await scheduler.resume_provider("scripted")
    assert sorted(resumed) == sorted([team_a.id, team_b.id])
    for team in (team_a, team_b):
        assert (await scheduler.registry.get(run.id, team.id)).status == "idle"
    with pytest.raises(ProviderNotPaused, match="'scripted' is not paused"):
        await scheduler.resume_provider("scripted")  # nothing is: nothing logged
    assert [k for k, _, _ in await _kinds(runtime, run.id)].count("provider.resumed") == 1


async def test_the_cli_asks_and_the_runs_scheduler_resumes_the_provider_once(
    runtime: LabRuntime, lab_settings: Settings
) -> None:
    title = "auth error, fixed from the CLI"
    never = [Reply(text="never served")]
    async with scripted_run(runtime, title, never, key=KEY, lab_key=WRONG_KEY) as arranged:
        run, team = arranged.run, arranged.team
        await arranged.scheduler.run(seconds=60)
    assert (await runtime.lab.teams.get(run.id, team.id)).status == "paused"
    # as a lab killed while it dispatched leaves it: the run counts as driven
    await runtime.lab.events.append(run.id, DispatchStarted(seconds=None))

    # the CLI is another process: it cannot reach the scheduler, so it logs a request
    refused = await asyncio.to_thread(run_cli, lab_settings, "resume-provider", run.id, "deepseek")
    assert refused.exit_code == 2 and "'deepseek' is not paused" in refused.output
    asked = await asyncio.to_thread(
        run_cli, lab_settings, "resume-provider", run.id, "scripted", "--no-test"
    )
    assert asked.exit_code == 0, asked.output
    (request,) = await runtime.lab.events.read(run.id, kinds=["provider.resume_requested"])
    assert request.payload == {"provider": "scripted", "connection": "scripted", "by": "cli"}
    assert (await runtime.lab.teams.get(run.id, team.id)).status == "paused"  # not yet

    # the scheduler that drives the run next (a new one, as after a restart) answers it
    driver = runtime.scheduler(run.id, SchedulerConfig())
    await driver.answer_resume_requests()
    assert (await runtime.lab.teams.get(run.id, team.id)).status == "idle"
    (answer,) = await runtime.lab.events.read(run.id, kinds=["provider.resumed"])
    assert answer.payload["request_seq"] == request.seq and answer.payload["teams"] == [team.id]
    # answered once: a later scheduler, or the next pass, leaves it alone
    await runtime.scheduler(run.id, SchedulerConfig()).answer_resume_requests()
    await driver.answer_resume_requests()
    assert len(await runtime.lab.events.read(run.id, kinds=["provider.resumed"])) == 1


async def test_the_run_stops_dispatching_before_the_cost_cap_is_crossed(
    runtime: LabRuntime,
) -> None:
    usage = Usage(prompt_tokens=1000, completion_tokens=100)

    def slow_reader(body: dict[str, Any]) -> Reply:
        return Reply(tool_calls=[ToolCall("ls", {"path": "/"})], usage=usage, delay_s=0.05)

    config = SchedulerConfig(caps=BudgetCaps(run_cost_usd=0.25), model_calls=3)
    async with scripted_run(
        runtime,
        "cost cap",
        slow_reader,
        key=KEY,
        teams=3,
        config=config,
        # 1000 in + 100 out at 10 + 100 USD per Mtok = 0.02 USD per call
        input_price_per_mtok=10.0,
        output_price_per_mtok=100.0,
        max_output_tokens=100,
    ) as arranged:
        run = arranged.run
        reason = await arranged.scheduler.run(seconds=120)
        served = len(arranged.server.chat_bodies)

    events = await _kinds(runtime, run.id)
    costs = [p["usage"]["cost_usd"] for kind, _, p in events if kind == "model.response"]
    assert sum(costs) <= 0.25 + 1e-9
    assert len(costs) == served  # every call the server answered is accounted for
    assert len(costs) >= 5
    assert reason.code == ReasonCode.RUN_CAP and reason.params == {"cap": 0.25, "unit": "USD"}
    assert reason.text() == "budget: the run would exceed its cap of 0.25 USD with this call"
    assert any(kind == "team.paused" and p["reason"].startswith("budget") for kind, _, p in events)
    assert any(kind == "team.paused" and p["reason_code"] == "run_cap" for kind, _, p in events)


async def test_token_usage_recorded_is_what_the_server_reported(runtime: LabRuntime) -> None:
    script = [
        Reply(tool_calls=[ToolCall("list_local_cases", {})], usage=Usage(321, 17)),
        Reply(text="Nothing else to do. [done]", usage=Usage(654, 9)),
    ]
    async with scripted_run(runtime, "usage", script, key=KEY) as arranged:
        run = arranged.run
        await arranged.scheduler.run(seconds=30)
        tool_result = arranged.server.chat_bodies[1]["messages"][-1]

    events = await _kinds(runtime, run.id)
    usages = [p["usage"] for kind, _, p in events if kind == "model.response"][:2]
    assert [(u["input_tokens"], u["output_tokens"]) for u in usages] == [(321, 17), (654, 9)]
    assert tool_result["role"] == "tool"
    assert "c01_row_f32" in tool_result["content"]  # the real tool's real return


async def test_agent_file_tools_cannot_leave_the_workspace(runtime: LabRuntime) -> None:
    attempts = [
        ToolCall("read_file", {"file_path": "/../../etc/passwd"}),
        ToolCall("read_file", {"file_path": "/.git/config"}),
        ToolCall("write_file", {"file_path": "/harness/harness.c", "content": "int x;"}),
        ToolCall(
            "edit_file",
            {"file_path": "/include/cmg_abi.h", "old_string": "CMG", "new_string": "XXX"},
        ),
        ToolCall("write_file", {"file_path": "/../escape.c", "content": "x"}),
    ]
    script = [Reply(tool_calls=attempts), Reply(text="Blocked everywhere. [done]")]
    async with scripted_run(runtime, "escapes", script, key=KEY) as arranged:
        team = arranged.team
        await arranged.scheduler.run(seconds=30)
        results = [m for m in arranged.server.chat_bodies[1]["messages"] if m["role"] == "tool"]

    assert len(results) == len(attempts)
    for result in results:
        text = result["content"].lower()
        assert any(
            w in text
            for w in (
                "not allowed",
                "not accessible",
                "fixed by the operator",
                "permission",
                "denied",
                "error",
            )
        ), text
        assert str(team.workspace.parent) not in result["content"]  # no host paths
    harness = (team.workspace / "harness" / "harness.c").read_text()
    assert harness != "int x;"
    assert not (team.workspace.parent / "escape.c").exists()


async def test_proposed_cases_are_probe_hypotheses_beside_the_local_ones(
    runtime: LabRuntime,
) -> None:
    proposal = {
        "id": "wide_row",
        "input0": [3, 5000],
        "input1": [3, 5000],
        "input2": [3, 5000],
        "dtype": "float32",
        "axes": [1],
        "keep_dims": False,
        "distribution": "positive",
    }
    script = [
        Reply(
            tool_calls=[
                ToolCall("propose_local_cases", {"cases": [proposal], "rationale": "wide rows"})
            ]
        ),
        Reply(
            tool_calls=[
                ToolCall(
                    "propose_local_cases",
                    {
                        "cases": [
                            {
                                "id": "bad",
                                "input0": [2, 3],
                                "input1": [4, 5],
                                "input2": [4, 5],
                                "dtype": "float32",
                            }
                        ],
                        "rationale": "broken",
                    },
                )
            ]
        ),
        Reply(
            tool_calls=[
                ToolCall(
                    "record_experiment_plan",
                    {
                        "failure_evidence": "none",
                        "hypothesis": "wide rows work",
                        "change": "none",
                        "validation_criterion": "probe passes",
                        "case_ids": ["c01_row_f32"],
                    },
                )
            ]
        ),
        Reply(
            tool_calls=[
                ToolCall(
                    "simulate_kernel",
                    {"mode": "probe", "case_ids": ["x_team001_wide_row", "c01_row_f32"]},
                )
            ]
        ),
        Reply(tool_calls=[ToolCall("list_local_cases", {})]),
        Reply(text="Checked. [done]"),
    ]
    async with scripted_run(runtime, "proposals", script, key=KEY) as arranged:
        await arranged.scheduler.run(seconds=120)
        tool_results = [
            json.loads(m["content"])
            for m in arranged.server.chat_bodies[-1]["messages"]
            if m["role"] == "tool"
        ]
    added, refused, _plan, probe, listing = tool_results
    assert added["added"][0]["id"] == "x_team001_wide_row"
    assert len(added["added"][0]["input_hash"]) == 64
    assert added["status"] == "unconfirmed hypothesis"
    assert "do not broadcast" in refused["error"]
    assert probe["status"] == "probe_passed" and probe["cases_run"] == 2
    assert [c["id"] for c in listing["local"]][:1] == ["c01_row_f32"]
    assert len(listing["local"]) == 15  # the originals are never replaced
    assert listing["proposed"][0]["status"] == "unconfirmed hypothesis"


async def test_a_team_of_members_delegates_to_its_analyst(runtime: LabRuntime) -> None:
    def members(body: dict[str, Any]) -> Reply:
        system = json.dumps([m for m in body["messages"] if m["role"] == "system"])
        if "You analyse receipts" in system:  # the analyst subagent's own conversation
            return Reply(text="The baseline decodes indices with divisions: fuse the passes.")
        if _assistant_turns(body) == 0:
            return Reply(
                tool_calls=[
                    ToolCall(
                        "task",
                        {"description": "Where are the cycles lost?", "subagent_type": "analyst"},
                    )
                ]
            )
        return Reply(text="Analyst consulted. [done]")

    config = SchedulerConfig(members=True)
    async with scripted_run(runtime, "members", members, key=KEY, config=config) as arranged:
        run = arranged.run
        await arranged.scheduler.run(seconds=60)
        final = arranged.server.chat_bodies[-1]["messages"]

    task_result = next(m for m in final if m["role"] == "tool")
    assert "fuse the passes" in task_result["content"]
    events = await _kinds(runtime, run.id)
    assert any(kind == "tool.call" and p["name"] == "task" for kind, _, p in events)
