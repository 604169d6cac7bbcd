"""Two teams on one compiled agent graph keep their work apart (the hostile-model rule: a team
never reaches another team's private work), through the real harness, scheduler and an
OpenAI-compatible stand-in serving both teams at once.

Each team's scripted model writes a note naming itself, reads it back, records a plan and
finishes; the calls of the two teams interleave on the one graph. Each workspace must hold
only its own team's note, each read must return its own note, each plan must be in its own
team's notebook, and every event must carry the team whose call made it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from justkernel.agents.binding import CallBackend, CallContext
from justkernel.app import LabRuntime
from justkernel.core.reasons import ReasonCode
from justkernel.scheduler.scheduler import SchedulerConfig
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply, ToolCall, Usage

KEY = "sk-shared-graph-key-445566"
NOTE = "/scratch/whoami.md"
NAMED = re.compile(r"You are (\S+), an engineering team")


def _team_of(body: dict[str, Any]) -> str:
    system = json.dumps([m for m in body["messages"] if m["role"] == "system"])
    match = NAMED.search(system)
    assert match is not None, "the system prompt names the team"
    return match.group(1)


def _model(body: dict[str, Any]) -> Reply:
    """Derive each step from the conversation: write, read, plan, done."""
    team = _team_of(body)
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    steps = [
        ToolCall("write_file", {"file_path": NOTE, "content": f"note of {team}\n"}),
        ToolCall("read_file", {"file_path": NOTE}),
        ToolCall(
            "record_experiment_plan",
            {
                "failure_evidence": "none yet",
                "hypothesis": f"hypothesis of {team}",
                "change": "none",
                "validation_criterion": "none",
                "case_ids": [],
            },
        ),
    ]
    if turns < len(steps):
        return Reply(tool_calls=[steps[turns]], usage=Usage(100, 10), delay_s=0.05)
    return Reply(text=f"{team} is finished. [done]", usage=Usage(100, 5))


async def test_two_teams_share_one_graph_and_keep_their_work_apart(runtime: LabRuntime) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    async with OpenAIServer(_model, api_key=KEY) as server:
        runtime.presets["scripted"] = scripted_preset(server.base_url)
        run = await runtime.lab.runs.create("shared graph")
        scheduler = runtime.scheduler(run.id, SchedulerConfig(model_calls=2))
        teams = [await scheduler.add_team("scripted") for _ in range(2)]
        assert (await scheduler.run(seconds=120)).code == ReasonCode.NO_WORK
        assert not server.handler_errors

    assert len(scheduler.graphs) == 1  # both teams ran on one compiled graph

    for team in teams:
        name = team.display_name
        # its workspace holds its own note, never the other team's
        assert (team.workspace / NOTE.lstrip("/")).read_text() == f"note of {name}\n"
        plans = await runtime.lab.experiments.list(run.id, team.id)
        assert [p.plan["hypothesis"] for p in plans] == [f"hypothesis of {name}"]
    events = [e async for e in runtime.lab.events.iter_all(run.id)]
    for team in teams:
        other = next(t for t in teams if t.id != team.id)
        mine = [e for e in events if e.team == team.id]
        reads = [
            e.payload["content"]
            for e in mine
            if e.kind == "tool.result" and e.payload["name"] == "read_file"
        ]
        assert len(reads) == 1 and f"note of {team.display_name}" in reads[0]
        text = json.dumps([e.payload for e in mine])
        assert other.display_name not in text  # nothing of the other team in its events
        kinds = [e.kind for e in mine]
        assert kinds.count("model.response") == 4
        assert "experiment.planned" in kinds
    # both teams' calls reached the model with their own names
    assert {_team_of(b) for b in server.chat_bodies} == {t.display_name for t in teams}


def test_a_shared_graph_call_without_its_team_acts_for_no_team() -> None:
    """No bound team, no fallback: the file backend and the tools' context refuse."""
    with pytest.raises(RuntimeError, match="without its team"):
        CallBackend().read(NOTE)
    with pytest.raises(RuntimeError, match="without its team"):
        _ = CallContext().workspace


def test_the_offline_models_of_a_run_convert_each_tool_once(tmp_path: Path) -> None:
    """Every team's offline model binds the shared graph's tools at every call: the schemas
    converted for one team serve the next (one cache a run, `SharedGraphs.tool_schemas`)."""
    from langchain_core.tools import tool

    from justkernel.agents.harness import SharedGraphs, chat_model
    from justkernel.settings.models import load_model_presets
    from justkernel.settings.secrets import SecretsStore

    @tool
    def measure(case: str, repeat: int = 1) -> str:
        """Measure one case."""
        return case * repeat

    @tool
    def note(text: str) -> str:
        """Write a note."""
        return text

    graphs = SharedGraphs()
    offline = load_model_presets(None)["offline"]
    secrets = SecretsStore(tmp_path / "cfg")  # never read: an offline preset has no key
    models = [
        chat_model(offline, secrets, seed=n, tool_schemas=graphs.tool_schemas) for n in (1, 2)
    ]
    bound = [m.bind_tools([measure, note]).kwargs["tools"] for m in models]
    assert len(graphs.tool_schemas) == 2
    assert bound[0] == bound[1] and all(a is b for a, b in zip(*bound, strict=True))
    assert [s["function"]["name"] for s in bound[0]] == ["measure", "note"]
