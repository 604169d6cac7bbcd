"""A full simulation of the untouched template is answered as the baseline, never as a frozen
candidate: the Judger's review refuses to submit the template, so a model told "frozen_candidate"
would wait for an official result that never comes (issue #15, the model-facing contract).
Through the real harness and scheduler against the OpenAI-compatible stand-in; the template's
full receipt is the one the other scheduler tests measure (the shared lab folder's cache)."""

from __future__ import annotations

import json
from typing import Any

from justkernel.app import LabRuntime
from justkernel.scheduler.scheduler import SchedulerConfig
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply, ToolCall

KEY = "sk-baseline-answer-key-0041"
PLAN = {
    "failure_evidence": "no receipt yet",
    "hypothesis": "the template is correct but slow; measure it first",
    "change": "none: measure the baseline",
    "validation_criterion": "every local case passes",
    "case_ids": ["c15_small_bcast_f32"],
}


def _measure_the_template(body: dict[str, Any]) -> Reply:
    steps = [
        ToolCall("record_experiment_plan", PLAN),
        ToolCall("simulate_kernel", {"mode": "full"}),
    ]
    answered = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if answered < len(steps):
        return Reply(tool_calls=[steps[answered]])
    return Reply(text="Baseline measured. [done]")


async def test_the_untouched_template_is_answered_as_the_baseline_and_not_frozen(
    runtime: LabRuntime,
) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    async with OpenAIServer(_measure_the_template, api_key=KEY) as srv:
        runtime.presets["scripted"] = scripted_preset(srv.base_url)
        run = await runtime.lab.runs.create("baseline answer")
        scheduler = runtime.scheduler(run, SchedulerConfig())
        await scheduler.add_team("scripted")
        await scheduler.run(seconds=300)
        last = srv.chat_bodies[-1]
    assert not srv.handler_errors
    results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    answer = json.loads(results[-1])
    assert answer["status"] == "measured", answer
    assert "frozen_candidate" not in answer
    assert "baseline" in answer["baseline"] and "not a candidate" in answer["baseline"]
    # nothing was frozen: no candidate the Judger would review and refuse, none shared
    assert await scheduler.candidates.list(run.id) == []
    kinds = [e.kind async for e in runtime.lab.events.iter_all(run.id)]
    assert "candidate.frozen" not in kinds
