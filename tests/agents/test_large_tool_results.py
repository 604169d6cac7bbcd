"""A tool result too long for the context goes to the team's `scratch/`, and the model is told
where: Deep Agents offloads a result over its limit (20k tokens) to `/large_tool_results/<id>`,
which the workspace refuses ("only op_host/, op_kernel/ and scratch/ may be written"), and on a
refused write it keeps the whole result in the history instead: every later request carried it
(issue #15). Through the real harness and scheduler against the OpenAI-compatible stand-in: the
team's analyst answers a `task` with a report longer than the limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from justkernel.agents.backend import WorkspaceBackend
from justkernel.app import LabRuntime
from justkernel.scheduler.scheduler import SchedulerConfig
from justkernel.teams.workspace import SCRATCH_DIR, TeamWorkspace
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply, ToolCall

KEY = "sk-large-results-key-0052"
REPORT = "".join(
    f"case c{i:05d}: MTE2 bound, 31 % busy, the gap is the tile loop\n" for i in range(2000)
)
ASK = {"subagent_type": "analyst", "description": "Where are the cycles lost? Every case."}


def _system(body: dict[str, Any]) -> str:
    return str([m["content"] for m in body["messages"] if m["role"] == "system"])


def _team_with_a_long_report(body: dict[str, Any]) -> Reply:
    if "You analyse receipts" in _system(body):  # the analyst's own thread
        return Reply(text=REPORT)
    answered = [m for m in body["messages"] if m["role"] == "tool"]
    if not answered:
        return Reply(tool_calls=[ToolCall("task", ASK, id="call_report")])
    return Reply(text="Read the report. [done]")


async def test_a_long_tool_result_is_kept_in_scratch_and_the_model_told_where(
    runtime: LabRuntime,
) -> None:
    assert len(REPORT) > 4 * 20_000  # over Deep Agents' eviction limit
    runtime.lab.secrets.set("scripted_key", KEY)
    async with OpenAIServer(_team_with_a_long_report, api_key=KEY) as srv:
        runtime.presets["scripted"] = scripted_preset(srv.base_url)
        run = await runtime.lab.runs.create("large tool results")
        scheduler = runtime.scheduler(run, SchedulerConfig(members=True))
        team = await scheduler.add_team("scripted")
        await scheduler.run(seconds=120)
        team_bodies = [b for b in srv.chat_bodies if "You analyse receipts" not in _system(b)]
    assert not srv.handler_errors
    (answer,) = [m["content"] for m in team_bodies[-1]["messages"] if m["role"] == "tool"]
    assert len(answer) < len(REPORT) // 4  # the history holds a preview, not the report
    assert "/scratch/large_tool_results/" in answer and "read_file" in answer
    path = answer.split("/scratch/large_tool_results/", 1)[1].split()[0]
    saved = Path(team.workspace) / SCRATCH_DIR / "large_tool_results" / path
    assert saved.read_text() == REPORT.rstrip()  # all of it (as `task` answers it: stripped)
    # the folder Deep Agents' own tool descriptions name reads the same file
    backend = WorkspaceBackend(TeamWorkspace(Path(team.workspace), scheduler.operator))
    read = backend.read(f"/large_tool_results/{path}", 1999, 1)
    assert read.error is None and "c01999" in str(read.file_data)
