"""The model-facing contract as a model receives it, over the OpenAI-compatible stand-in and the
real harness and scheduler: the system prompt states the loop and the run's budget, every lab
tool argument is described and case ids are enumerated, the lab's documents read whole, tools
the team cannot use are not offered (and a call of one is answered with those that are), and
nothing ever mentions `execute`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from justkernel.agents.backend import WorkspaceBackend
from justkernel.app import LabRuntime
from justkernel.governance.budget import BudgetCaps
from justkernel.operators import OperatorDefinition, load_operator, local_cases
from justkernel.scheduler.scheduler import SchedulerConfig
from justkernel.teams.workspace import TeamWorkspace
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply, ToolCall

KEY = "sk-model-contract-key-0033"
PEERS = {"send_message", "read_public_candidates", "fetch_candidate_source", "record_experience"}
LAB_TOOLS = {
    "record_experiment_plan",
    "compile_kernel",
    "simulate_kernel",
    "read_simulation_results",
    "list_local_cases",
    "propose_local_cases",
    "read_inbox",
}
LONG_LINE = "x" * 200_000


def _steps(body: dict[str, Any]) -> Reply:
    steps = [
        ToolCall("read_file", {"file_path": "/spec.md"}),
        ToolCall("compile_kernel", {}),
        ToolCall("execute", {"command": "ls"}),
        ToolCall("read_flie", {"file_path": "/spec.md"}),
        ToolCall("write_file", {"file_path": "/scratch/long.txt", "content": LONG_LINE}),
        ToolCall("read_file", {"file_path": "/scratch/long.txt"}),
    ]
    done = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if done < len(steps):
        return Reply(tool_calls=[steps[done]])
    return Reply(text="Nothing better to try. [done]")


def _described(offered: dict[str, Any], names: set[str]) -> None:
    """Every argument of these tools has a description."""
    assert names <= set(offered)
    for name in names:
        props = offered[name]["parameters"].get("properties", {})
        assert all(p.get("description") for p in props.values()), name


def _system(body: dict[str, Any]) -> str:
    return json.dumps([m for m in body["messages"] if m["role"] == "system"])


def _results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def _judger_waits() -> bool:  # the seam a Judger uses: a run with one
    return False


async def test_a_lone_team_sees_the_loop_its_budget_and_only_tools_it_can_use(
    runtime: LabRuntime,
) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    caps = BudgetCaps(team_tokens=1_000_000)
    async with OpenAIServer(_steps, api_key=KEY, check_tool_history=True) as srv:
        runtime.presets["scripted"] = scripted_preset(srv.base_url)
        run = await runtime.lab.runs.create("contract")
        scheduler = runtime.scheduler(run, SchedulerConfig(caps=caps))
        await scheduler.add_team("scripted")
        await scheduler.run(seconds=600, busy=_judger_waits)
        first, last = srv.chat_bodies[0], srv.chat_bodies[-1]
    assert not srv.handler_errors

    system = _system(first)
    loop = ["record_experiment_plan", "compile_kernel", 'mode=\\"probe\\"', 'mode=\\"full\\"']
    loop += ["every new experiment needs a new plan", "freezes", "Judger", "read_inbox"]
    for said in [*loop, "run ends at", "1,000,000 model tokens", "[done]"]:
        assert said in system, said
    assert "web-research" not in system and "research" not in system

    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert "read_inbox" in offered and not PEERS & set(offered)
    assert "execute" not in json.dumps([first["tools"], system])
    _described(offered, LAB_TOOLS)
    local = [c.id for c in local_cases()]
    plan_ids = offered["record_experiment_plan"]["parameters"]["properties"]["case_ids"]
    assert plan_ids["items"]["enum"] == local
    assert local[0] in json.dumps(offered["simulate_kernel"]["parameters"]["properties"])

    spec, compiled, execute, misspelt, _written, long_read = _results(last)
    last_line = (scheduler.operator.spec_path.read_text().rstrip().splitlines())[-1]
    assert last_line in spec  # the whole spec in the first read
    compiled_answer = json.loads(compiled)
    assert compiled_answer["status"] == "compiled" and compiled_answer["smoke"] == "passed"
    for refused in (execute, misspelt):
        assert "not one of your tools" in refused and "read_inbox" in refused
        assert "execute" not in refused.split("Your tools are")[1]
        assert "send_message" not in refused.split("Your tools are")[1]
    assert "truncated" in long_read and "execute" not in long_read


TEAM_NAMES = ("Scripted-001", "Scripted-002")


async def test_a_team_with_company_is_offered_the_board_tools(runtime: LabRuntime) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    done = Reply(text="[done]")
    async with OpenAIServer(lambda _body: done, api_key=KEY) as srv:
        runtime.presets["scripted"] = scripted_preset(srv.base_url)
        run = await runtime.lab.runs.create("company")
        scheduler = runtime.scheduler(run, SchedulerConfig())
        await scheduler.add_team("scripted")
        await scheduler.add_team("scripted")
        await scheduler.run(seconds=60)
        bodies = srv.chat_bodies
    # one turn each; a request the client retried (a slow CI machine) may come twice
    addressed = {name for body in bodies for name in TEAM_NAMES if name in _system(body)}
    assert addressed == set(TEAM_NAMES) and len(bodies) <= 4
    for body in bodies:
        _described({t["function"]["name"]: t["function"] for t in body["tools"]}, PEERS)
        system = _system(body)
        assert "has no Judger" in system and "no fixed end" not in system


@pytest.mark.parametrize("target", ["cpu", "ascendc"])
def test_the_spec_reads_whole_and_other_files_page(target: str, tmp_path: Path) -> None:
    """Both specs (the C port's spec.md and spec_ascendc.md) come whole at read_file's
    default of 100 lines; an ordinary file still pages."""
    base = load_operator()
    definition: OperatorDefinition = base if target == "cpu" else base.ascendc_target()
    backend = WorkspaceBackend(TeamWorkspace.create(tmp_path / "ws", definition))
    spec = backend.read("/spec.md", 0, 100)
    lines = definition.spec_path.read_text().splitlines()
    assert spec.error is None and spec.end_line == spec.total_lines == len(lines) > 100
    skill = backend.read("/skills/engineering-workflow/SKILL.md", 0, 100)
    assert skill.end_line == skill.total_lines
    assert backend.read("/spec.md", 0, 5).end_line == 5  # a limit the model chose stands
    (backend.workspace.root / "scratch" / "notes.md").write_text("line\n" * 150)
    notes = backend.read("/scratch/notes.md", 0, 100)
    assert notes.end_line == 100 and notes.total_lines == 150 and notes.next_offset == 100
