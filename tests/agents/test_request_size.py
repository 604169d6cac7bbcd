"""What every model request costs before the model says anything: the system prompt and the
tool schemas, as the OpenAI-compatible stand-in receives them from the real harness and
scheduler. LangChain's `write_todos` description alone was 3.9k characters (and its system
prompt section 1.4k) of generic advice that contradicts the lab's loop ("skip the list for
simple tasks", "mark several tasks in progress"); the lab's own are short and follow the loop.

The bounds: the tool schemas of a lone team are the lab's seven tools, every argument described
and the case ids enumerated (6.1k characters of JSON), Deep Agents' file tools (8.6k) and the
todo tool (0.9k): 15.6k, so 18k leaves room for a few more arguments (a team with members adds
the `task` tool, 1.8k). The system prompt is 3.4k here; a Judger and spending caps add under 1k.
Past a bound, a change has added text every request pays for, each turn of each team, and
should say why."""

from __future__ import annotations

import json
from typing import Any

from justkernel.agents.prompts import TODO_SYSTEM_PROMPT, TODO_TOOL_DESCRIPTION
from justkernel.app import LabRuntime
from justkernel.scheduler.scheduler import SchedulerConfig
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply

KEY = "sk-request-size-key-0061"
TOOLS_BOUND = 18_000  # characters of the request's `tools` JSON (see the module docstring)
SYSTEM_BOUND = 6_000  # characters of the system prompt, skills list included
LOOP = ("record_experiment_plan", "compile_kernel", "probe", "full")


def _sizes(body: dict[str, Any]) -> dict[str, int]:
    tools = {t["function"]["name"]: len(json.dumps(t)) for t in body["tools"]}
    system = sum(len(str(m["content"])) for m in body["messages"] if m["role"] == "system")
    return {"system": system, "tools": len(json.dumps(body["tools"])), **tools}


async def _first_request(runtime: LabRuntime) -> dict[str, Any]:
    runtime.lab.secrets.set("scripted_key", KEY)
    async with OpenAIServer(lambda _body: Reply(text="[done]"), api_key=KEY) as srv:
        runtime.presets["scripted"] = scripted_preset(srv.base_url)
        run = await runtime.lab.runs.create("request size")
        scheduler = runtime.scheduler(run, SchedulerConfig())
        await scheduler.add_team("scripted")
        await scheduler.run(seconds=60)
        (body,) = srv.chat_bodies
    return body


async def test_the_todo_tool_is_ours_and_a_request_stays_small(runtime: LabRuntime) -> None:
    body = await _first_request(runtime)
    sizes = _sizes(body)
    print("request sizes (characters):", sizes)  # the figures in the closing note
    offered = {t["function"]["name"]: t["function"] for t in body["tools"]}
    todo = offered["write_todos"]["description"]
    assert todo == TODO_TOOL_DESCRIPTION
    assert all(step in todo for step in LOOP)
    system = str([m["content"] for m in body["messages"] if m["role"] == "system"])
    assert TODO_SYSTEM_PROMPT.split("\n", 1)[0] in system
    assert "trivial" not in system and "less than 3 steps" not in system  # Deep Agents' own
    assert sizes["tools"] < TOOLS_BOUND, sizes
    assert sizes["system"] < SYSTEM_BOUND, sizes
