"""Approval modes around each tool call (issue #17, 4): a call the team's mode asks for, with no
grant to cover it, is recorded as a request on the desk and the turn stops in LangGraph's
`interrupt`; the checkpoint (durable) holds the call, so a decision taken minutes or a lab
restart later resumes it (`Command(resume=...)`, the scheduler's), and the call then runs or is
answered that a person rejected it.

The desk's row is the decision's record: on resume the node re-runs up to here, the request is
found (its id comes from the call), and a decided one is taken from the store, whatever the
resume value says (the value only wakes the call; a hostile or stale value decides nothing).
An ordinary call costs a look at the desk's cache: no read of the database.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import interrupt

from justkernel.agents.approval_desk import ApprovalDesk, Decision
from justkernel.agents.middleware.shared import Place, Seat, ToolHandler, ToolResultT
from justkernel.core.approvals import SIMULATE, WRITE_TOOLS, ApprovalMode

INTERRUPT_TYPE = "approval"  # the `type` of every interrupt value this middleware raises


def approval_interrupt(value: Any) -> str | None:
    """The request id an interrupt value of ours names, or None for anyone else's."""
    if isinstance(value, dict) and value.get("type") == INTERRUPT_TYPE:
        request_id = value.get("request_id")
        return request_id if isinstance(request_id, str) else None
    return None


def next_step(tool: str, mode: str) -> str:
    """What a team whose call was rejected can do instead."""
    if tool == SIMULATE:
        return (
            'keep working with compile_kernel and simulate_kernel(mode="probe"), improve the '
            "change, and ask for a full simulation again when you have new evidence"
        )
    if tool in WRITE_TOOLS and mode == ApprovalMode.READ_ONLY:
        return (
            "this team is read-only for now: describe the change in your plan or notes, and "
            "wait for the person to allow writes"
        )
    return "do not repeat the same call; choose another step toward your goal"


def rejected_message(request_id: str, tool: str, mode: str, decision: Decision) -> str:
    reason = f' Their reason: "{decision.reason}".' if decision.reason else ""
    return (
        f"rejected by a person ({decision.by or 'the supervisor'}): your {tool} call did not "
        f"run (approval {request_id}).{reason} Next: {next_step(tool, mode)}."
    )


class ApprovalsMiddleware(AgentMiddleware):
    """Asks a person before the calls the team's approval mode names (`core.approvals`)."""

    def __init__(self, seat: Seat | Place, desk: ApprovalDesk) -> None:
        super().__init__()
        self.seat = seat
        self.desk = desk

    async def awrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResultT:
        seat = self.seat.at(request.runtime)
        call = request.tool_call
        name = call["name"]
        args = call.get("args") or {}
        metadata = getattr(request.tool, "metadata", None) or {}
        declared = metadata.get("needs_approval") if "needs_approval" in metadata else None
        run_id, team_id = seat.ctx.run_id, seat.team_id
        mode = await self.desk.check(run_id, team_id, name, args, declared=declared)
        if mode is None:
            return await handler(request)
        card = await self.desk.request(
            run_id, team_id, name, args, call["id"], mode=mode, member=seat.member
        )
        decision = Decision.of(card)
        if decision is None:
            interrupt(
                {
                    "type": INTERRUPT_TYPE,
                    "request_id": card.id,
                    "team": team_id,
                    "tool": name,
                    "kind": card.kind,
                    "args": card.args,
                    "mode": card.mode,
                }
            )
            # resumed: the desk's row decides, never the value handed back (the scheduler
            # resumes only once every card of the turn is decided, and a decision is final)
            decision = Decision.of(await self.desk.get(card.id))
        if decision is not None and decision.approved:
            return await handler(request)
        if decision is None:
            decision = Decision(card.id, False, "", "no decision was recorded")
        return ToolMessage(
            content=rejected_message(card.id, name, card.mode, decision),
            name=name,
            tool_call_id=call["id"],
            status="error",
        )
