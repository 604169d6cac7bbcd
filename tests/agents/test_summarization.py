"""History summarisation through the real harness against the OpenAI-compatible stand-in: the
summary calls are model calls like any other (a slot, the budget, a `model.response` event
with `purpose: summary`), the trigger derives from the preset's `context_window`, and the
replaced history lands in the team's `scratch/`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from justkernel.agents.backend import WorkspaceBackend
from justkernel.agents.summarization import HistoryBackend, context_limits
from justkernel.app import LabRuntime
from justkernel.governance.budget import BudgetCaps
from justkernel.governance.limits import ModelCallLimiter
from justkernel.operators import load_operator
from justkernel.scheduler.scheduler import SchedulerConfig
from justkernel.settings.models import ModelPreset
from justkernel.teams.workspace import TeamWorkspace
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply, ToolCall, Usage

KEY = "sk-summaries-key-4455"
SUMMARY_MARK = "Context Extraction Assistant"  # Deep Agents' summary prompt opens with it
SUMMARY_TEXT = "SUMMARY: the team wrote notes 1..n to scratch/."
NOTE = "cycle notes " * 1500  # ~18k characters (~4.5k tokens) per note


def is_summary(body: dict[str, Any]) -> bool:
    return SUMMARY_MARK in json.dumps(body["messages"])


def turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


@dataclass
class Script:
    """A team that writes one large note to scratch/ per step, `steps` times, then finishes;
    the answer to step n reports `total_tokens(n)` tokens (20 of them output). Summary
    requests get a short summary with `summary_usage`."""

    steps: int
    total_tokens: Callable[[int], int] = lambda _step: 120
    summary_usage: Usage = field(default_factory=lambda: Usage(300, 40))
    answered: int = 0
    limiter: ModelCallLimiter | None = None  # the run's, to see who holds a slot
    slots_held_at_summary: list[int] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        if is_summary(body):
            if self.limiter is not None:
                self.slots_held_at_summary.append(self.limiter.in_flight)
            return Reply(text=SUMMARY_TEXT, usage=self.summary_usage)
        self.answered += 1
        step = self.answered
        usage = Usage(self.total_tokens(step) - 20, 20)
        if step > self.steps:
            return Reply(text="All notes written. [done]", usage=usage)
        args = {"file_path": f"/scratch/note_{step}.md", "content": f"wrote note {step}\n{NOTE}"}
        return Reply(tool_calls=[ToolCall("write_file", args)], usage=usage)


async def run_team(
    runtime: LabRuntime, preset: ModelPreset, script: Script, caps: BudgetCaps | None = None
) -> tuple[OpenAIServer, list[tuple[str, dict[str, Any]]], Path, str]:
    runtime.lab.secrets.set("scripted_key", KEY)
    async with OpenAIServer(script, api_key=KEY) as server:
        runtime.presets["scripted"] = preset.model_copy(update={"base_url": server.base_url})
        run = await runtime.lab.runs.create("summaries")
        scheduler = runtime.scheduler(run.id, SchedulerConfig(caps=caps or BudgetCaps()))
        script.limiter = scheduler.governance.limiter
        team = await scheduler.add_team("scripted")
        await scheduler.run(seconds=90)
        status = (await scheduler.registry.get(run.id, team.id)).status
    events = [(e.kind, e.payload) async for e in runtime.lab.events.iter_all(run.id)]
    return server, events, Path(team.workspace), status


def model_events(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [p for kind, p in events if kind in ("model.response", "model.error")]


async def test_summary_calls_are_recorded_counted_and_trigger_at_the_derived_threshold(
    runtime: LabRuntime,
) -> None:
    preset = scripted_preset("http://127.0.0.1:9/v1", context_window=64_000)
    trigger = context_limits(preset).trigger_tokens  # (64000 - 8192) * 0.8
    # the provider reports one token under the trigger for steps 1-2, the trigger at step 3
    sizes = {1: trigger - 1, 2: trigger - 1, 3: trigger}
    script = Script(steps=4, total_tokens=lambda step: sizes.get(step, 120))
    server, events, workspace, status = await run_team(runtime, preset, script)

    bodies = server.chat_bodies
    summaries = [i for i, body in enumerate(bodies) if is_summary(body)]
    # the third answer reported the trigger: the fourth call is preceded by a summary, and
    # no earlier call was (each of those reported one token under it)
    assert summaries and summaries[0] == 3
    assert all(turns(bodies[i]) == 0 for i in summaries)  # one user prompt, no tool history
    after = bodies[summaries[0] + 1]
    assert SUMMARY_TEXT in json.dumps(after["messages"])  # the next turn starts from it

    # every request the server answered is one recorded model call, with its purpose
    recorded = model_events(events)
    assert len(recorded) == len(server.requests) == len(bodies)
    purposes = [p["purpose"] for p in recorded]
    assert purposes.count("summary") == len(summaries)
    assert purposes.count("turn") == len(bodies) - len(summaries)
    summary_events = [p for p in recorded if p["purpose"] == "summary"]
    assert summary_events[0]["usage"]["input_tokens"] == 300
    assert SUMMARY_TEXT in summary_events[0]["text"]
    # and while the summary was asked for, it held a model-call slot (the only call in flight)
    assert script.slots_held_at_summary == [1] * len(summaries)

    # the older history went to the team's scratch/, and nothing was refused
    histories = list((workspace / "scratch" / "conversation_history").glob("*.md"))
    assert len(histories) == 1
    assert "wrote note 1" in histories[0].read_text(encoding="utf-8")
    assert not [p for kind, p in events if kind == "history.offload_failed"]
    assert status == "done"


async def test_a_cap_only_the_summary_crosses_pauses_the_team(runtime: LabRuntime) -> None:
    # a window the notes soon outgrow (their arguments clipped first, then summarised)
    preset = scripted_preset("http://127.0.0.1:9/v1", context_window=4_000)
    # turns report 120 tokens each; the summary 30k, past the 20k cap on its own (a turn's
    # reservation, prompt estimate plus output allowance, stays far under it)
    script = Script(steps=4, summary_usage=Usage(30_000, 100))
    server, events, _, status = await run_team(
        runtime, preset, script, caps=BudgetCaps(team_tokens=20_000)
    )
    bodies = server.chat_bodies
    assert [is_summary(b) for b in bodies].count(True) == 1
    assert is_summary(bodies[-1])  # no turn after the summary
    paused = [p for kind, p in events if kind == "team.paused"]
    assert len(paused) == 1 and "budget" in paused[0]["reason"]
    summary = next(p for p in model_events(events) if p["purpose"] == "summary")
    assert summary["usage"]["total"] == 30_100
    assert status == "paused"


async def test_a_history_write_the_workspace_refuses_is_reported(tmp_path: Path) -> None:
    workspace = TeamWorkspace.create(tmp_path / "teams" / "team-001", load_operator())
    refused: list[tuple[str, str]] = []

    async def report(path: str, error: str) -> None:
        refused.append((path, error))

    backend = HistoryBackend(WorkspaceBackend(workspace), report)
    assert backend.artifacts_root == "/scratch"  # where Deep Agents puts its history files
    assert not (await backend.awrite("/scratch/conversation_history/s.md", "# kept\n")).error
    assert refused == []
    # outside scratch/ and the editable folders (Deep Agents' own default folder,
    # /conversation_history/, is the workspace backend's alias of scratch/'s)
    result = await backend.awrite("/notes/s.md", "# lost\n")
    assert result.error and refused == [("/notes/s.md", result.error)]
    edited = await backend.aedit("/spec.md", "a", "b")
    assert edited.error and refused[-1] == ("/spec.md", edited.error)
