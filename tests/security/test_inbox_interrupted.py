"""A read of the inbox interrupted by a crash acknowledges nothing: the agent harness answers
the dangling call with an error ("did not complete") when the team runs again, and the official
feedback that call had taken must reach the agent by a later read, acknowledged once — on real
SQLite and PostgreSQL, with the harness's own middleware writing the error. The crash itself, in
a real `justkernel run`, is test_crash_matrix.py (feedback.delivering)."""

from __future__ import annotations

from pathlib import Path

from deepagents.middleware.patch_tool_calls import PatchToolCallsMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from justkernel.a2a.board import LabBoard
from justkernel.agents.middleware.inbox import inbox_reads
from justkernel.lab import Lab
from justkernel.store.teams import TeamRegistry


async def test_feedback_taken_by_an_interrupted_read_is_delivered_again(
    lab: Lab, tmp_path: Path
) -> None:
    run = await lab.runs.create("interrupted inbox")
    registry = TeamRegistry(lab.db)
    team = await registry.register(
        run.id, model_preset="offline", model_label="Offline", workspaces_dir=tmp_path, config={}
    )
    board = LabBoard(lab.db, lab.events, registry)
    news, _ = await board.post(
        run.id,
        sender="judger",
        sender_message_id="result:sub-1:all",
        recipient="all",
        type="feedback",
        payload={"summary": "team-001's cand-1: official_pass"},
    )
    taken = await board.deliver(run.id, team.id, "call-1")  # the lab dies inside this call
    assert [m.id for m in taken] == [news.id]

    # the team runs again: its history holds the call and, from the harness, an error for it
    history = [
        HumanMessage(content="continue"),
        AIMessage(content="", tool_calls=[{"name": "read_inbox", "args": {}, "id": "call-1"}]),
    ]
    patched = PatchToolCallsMiddleware().before_agent({"messages": history}, None)  # type: ignore[arg-type]
    assert patched is not None
    answers = [m for m in patched["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.status) for m in answers] == [("call-1", "error")]
    seen = inbox_reads(patched["messages"])
    assert seen == set()  # the feedback was never shown, so it is not acknowledged
    assert await board.ack(run.id, team.id, sorted(seen)) == 0

    assert await board.release_unseen(run.id, team.id, seen) == 1
    assert await board.delivery_states(run.id, news.id) == {team.id: "pending"}
    again = await board.deliver(run.id, team.id, "call-2")
    assert [m.id for m in again] == [news.id]
    assert await board.ack(run.id, team.id, ["call-2"]) == 1
    assert await board.ack(run.id, team.id, ["call-2"]) == 0
    assert await board.delivery_states(run.id, news.id) == {team.id: "acked"}
    kinds = [(e.kind, e.payload.get("message_id")) async for e in lab.events.iter_all(run.id)]
    assert kinds.count(("a2a.acked", news.id)) == 1
    assert kinds.count(("a2a.delivered", news.id)) == 1
    assert kinds.count(("a2a.released", news.id)) == 1
