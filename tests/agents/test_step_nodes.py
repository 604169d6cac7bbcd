"""An agent step is two graph nodes, the model and the tools: every `before_model` /
`after_model` hook would be a node of its own, and with `durability="sync"` each node is a
checkpoint written per step (seven nodes per step cost about a third of a step's lab CPU)."""

from __future__ import annotations

from deepagents.middleware.unsupported_content import UnsupportedContentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage

from justkernel.agents.middleware.lean_hooks import LabUnsupportedContentMiddleware
from justkernel.app import LabRuntime
from justkernel.scheduler.scheduler import SchedulerConfig
from tests.support.openai_server import Reply, ToolCall
from tests.support.scripted_run import scripted_run

KEY = "sk-scripted-step-nodes-5151"


async def test_a_team_graph_has_no_per_step_hook_nodes(runtime: LabRuntime) -> None:
    run = await runtime.lab.runs.create("step nodes")
    scheduler = runtime.scheduler(run.id, SchedulerConfig(members=True))
    team = await scheduler.add_team("offline")
    built = await scheduler._runtime(team)
    nodes = set(built.agent.graph.nodes) - {"__start__"}
    per_step = {n for n in nodes if n.endswith((".before_model", ".after_model"))}
    assert per_step == set(), per_step
    assert {"model", "tools"} <= nodes
    # what is left runs once per turn, not per step
    assert all(n in ("model", "tools") or n.endswith(("_agent",)) for n in nodes), nodes


async def test_parallel_todo_writes_are_refused_and_the_list_is_kept(
    runtime: LabRuntime,
) -> None:
    todos = [{"content": "plan the tiling", "status": "in_progress"}]
    script = [
        Reply(tool_calls=[ToolCall("write_todos", {"todos": todos})]),
        Reply(
            tool_calls=[
                ToolCall("write_todos", {"todos": [{"content": "a", "status": "pending"}]}),
                ToolCall("write_todos", {"todos": [{"content": "b", "status": "pending"}]}),
            ]
        ),
        Reply(text="Stopping here. [done]"),
    ]
    async with scripted_run(runtime, "parallel todos", script, key=KEY) as arranged:
        await arranged.scheduler.run(seconds=60)
        assert len(arranged.server.chat_bodies) == 3
        answers = [
            m
            for m in arranged.server.chat_bodies[2]["messages"]
            if m["role"] == "tool" and "more than once" in str(m["content"])
        ]
        assert len(answers) == 2, arranged.server.chat_bodies[2]["messages"]
        built = await arranged.scheduler._runtime(arranged.team)
        state = await built.agent.aget_state(
            {"configurable": {"thread_id": f"{arranged.run.id}:{arranged.team.id}"}}
        )
        assert [t["content"] for t in state.values["todos"]] == ["plan the tiling"]


def test_the_content_filter_passes_text_messages_as_they_are_and_still_replaces_an_image() -> None:
    """The lab's content filter skips string messages (one text block, which every model
    takes) instead of converting the whole history at every call; a list with an image is
    still replaced for a model whose profile refuses images, as Deep Agents' own does."""
    model = GenericFakeChatModel(messages=iter([]), profile={"image_inputs": False})
    text = HumanMessage(content="read /spec.md")
    image = HumanMessage(
        content=[
            {"type": "text", "text": "the chart"},
            {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"},
        ]
    )
    lab, theirs = LabUnsupportedContentMiddleware(), UnsupportedContentMiddleware()
    assert lab.name == theirs.name  # it replaces Deep Agents' own in the stack
    assert lab._filter_message(text, model=model) is text
    filtered = lab._filter_message(image, model=model)
    assert filtered == theirs._filter_message(image, model=model)
    blocks = filtered.content
    assert isinstance(blocks, list) and [b["type"] for b in blocks] == ["text", "text"]
    assert "does not support image" in blocks[1]["text"]
