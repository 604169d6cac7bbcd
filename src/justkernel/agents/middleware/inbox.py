"""Inbox acknowledgements: a delivery is acked once the agent's history holds its result.

The history is checkpointed before the next model call, so acknowledging at that point can lose
nothing: a lab killed earlier finds the read unanswered and delivers it again
(`LabBoard.release_unseen`, which reads the same `inbox_reads`). It is done around the model call,
not in a `before_model` hook: a hook is a graph node of its own, and each node is a checkpoint
write per agent step.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import ToolMessage

from justkernel.agents.board_tools import BoardAccess
from justkernel.agents.middleware.shared import ModelHandler, Place, Seat

ACK_SCAN = 40  # recent messages searched for inbox results to acknowledge


def inbox_reads(messages: Iterable[Any]) -> set[str]:
    """The read_inbox calls whose result the agent's history holds. A call that failed or
    never finished has none, or an error in its place (a dangling call is answered "did not
    complete" when the agent is invoked again): what it delivered was never seen."""
    return {
        m.tool_call_id
        for m in messages
        if isinstance(m, ToolMessage) and m.name == "read_inbox" and m.status != "error"
    }


class InboxAcksMiddleware(AgentMiddleware):
    def __init__(self, seat: Seat | Place, board: BoardAccess) -> None:
        super().__init__()
        self.seat = seat
        self.board = board

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        messages = list(request.state.get("messages", []))
        calls = sorted(inbox_reads(messages[-ACK_SCAN:]))
        if calls:
            seat = self.seat.at(request.runtime)
            await self.board.board.ack(seat.ctx.run_id, seat.team_id, calls)
        return await handler(request)
