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
        # per (run, team): the reads this process acked already. A read stays in the scanned
        # window for many calls, and acking it again changes nothing (its deliveries are
        # acked), so only a new one is sent to the store; a restarted lab acks each once more
        self._acked: dict[tuple[str, str], set[str]] = {}

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        messages = list(request.state.get("messages", []))
        reads = inbox_reads(messages[-ACK_SCAN:])
        if reads:
            seat = self.seat.at(request.runtime)
            acked = self._acked.setdefault((seat.ctx.run_id, seat.team_id), set())
            calls = sorted(reads - acked)
            if calls:
                await self.board.board.ack(seat.ctx.run_id, seat.team_id, calls)
                acked.update(calls)
        return await handler(request)
