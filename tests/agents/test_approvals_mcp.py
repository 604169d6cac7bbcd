"""MCP tools are subject to approval modes (issue #17, 4 and 5), through the real harness,
scheduler and a stdio MCP server written for the tests (`tests/fixtures/mcp/docs_server.py`):
in `ask` a tool of a server that keeps `needs_approval` (the default) waits for a person and
runs once approved, while a server that says `needs_approval = false` is believed; in
`read_only` every MCP tool asks, whatever its server says."""

from __future__ import annotations

import asyncio
from typing import Any

from justkernel.app import LabRuntime
from justkernel.core.approvals import ApprovalMode
from justkernel.core.reasons import ReasonCode
from justkernel.settings.mcp import mcp_file
from tests.agents.test_approvals import _until
from tests.agents.test_mcp_tools import stdio_toml
from tests.support.openai_server import Reply, ToolCall
from tests.support.scripted_run import scripted_run

KEY = "sk-approvals-mcp-key-5150"
STEPS = [
    ToolCall("mcp_free_search_api", {"query": "DataCopy"}, id="free_search"),
    ToolCall("mcp_docs_search_api", {"query": "DataCopy"}, id="docs_search"),
]


def _answers(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def _session(body: dict[str, Any]) -> Reply:
    answered = len(_answers(body))
    if answered < len(STEPS):
        return Reply(tool_calls=[STEPS[answered]])
    return Reply(text="Read the DataCopy entry. [done]")


def _two_servers(runtime: LabRuntime) -> None:
    path = mcp_file(runtime.lab.settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        stdio_toml(["search_api"], name="docs")
        + stdio_toml(["search_api"], name="free", extra="needs_approval = false\n")
    )


async def _cards_in(runtime: LabRuntime, mode: ApprovalMode) -> tuple[list[str], dict[str, str]]:
    """The tools that asked in `mode` (each approved as it appears) and the final answers."""
    _two_servers(runtime)
    async with scripted_run(runtime, f"mcp {mode}", _session, key=KEY) as arranged:
        desk = arranged.scheduler.approvals
        run_id = arranged.run.id
        await desk.set_mode(run_id, arranged.team.id, mode, by="test")
        task = asyncio.create_task(arranged.scheduler.run(seconds=300))
        asked: list[str] = []
        while not task.done():
            for card in await desk.pending(run_id):
                asked.append(card.tool)
                await desk.decide(card.id, approve=True, by="ana")
            await asyncio.wait([task], timeout=0.2)
        assert (task.result()).code == ReasonCode.NO_WORK
        assert not arranged.server.handler_errors
        answers = _answers(arranged.server.chat_bodies[-1])
    return asked, answers


async def test_ask_mode_asks_for_an_mcp_tool_unless_its_server_says_no(
    runtime: LabRuntime,
) -> None:
    asked, answers = await _cards_in(runtime, ApprovalMode.ASK)
    assert asked == ["mcp_docs_search_api"]
    assert "DataCopy(dst, src, count)" in answers["docs_search"]  # approved: it ran
    assert "DataCopy(dst, src, count)" in answers["free_search"]


async def test_read_only_asks_for_every_mcp_tool(runtime: LabRuntime) -> None:
    asked, answers = await _cards_in(runtime, ApprovalMode.READ_ONLY)
    assert asked == ["mcp_free_search_api", "mcp_docs_search_api"]
    assert all("DataCopy(dst, src, count)" in answers[i] for i in ("free_search", "docs_search"))


async def test_the_desk_waits_for_a_card_before_the_team_goes_on(runtime: LabRuntime) -> None:
    """No decision, no call: the card stays pending and the tool is not answered."""
    _two_servers(runtime)
    async with scripted_run(runtime, "mcp waits", _session, key=KEY) as arranged:
        desk = arranged.scheduler.approvals
        run_id = arranged.run.id
        await desk.set_mode(run_id, arranged.team.id, ApprovalMode.ASK, by="test")
        task = asyncio.create_task(arranged.scheduler.run(seconds=300))
        (card,) = await _until(lambda: desk.pending(run_id), "a card for the docs tool")
        assert card.tool == "mcp_docs_search_api" and card.args == {"query": "DataCopy"}
        served = len(arranged.server.chat_bodies)
        await asyncio.sleep(2)
        assert len(arranged.server.chat_bodies) == served  # the team waits; no model call
        await desk.decide(card.id, approve=False, by="ana", reason="use the spec")
        assert (await asyncio.wait_for(task, 300)).code == ReasonCode.NO_WORK
        answers = _answers(arranged.server.chat_bodies[-1])
    assert (
        "rejected by a person" in answers["docs_search"]
        and "use the spec" in answers["docs_search"]
    )
