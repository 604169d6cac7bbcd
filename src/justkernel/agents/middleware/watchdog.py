"""The stall watchdog at the model's door: before each call it nudges a team that made no
progress for a while, or pauses it; after each answered call it counts one response.

All of it happens around the model call, not in a `before_model` hook: a hook is a graph node of
its own, and each node is a checkpoint write per agent step. A pause ends the turn without
calling the model (`jump_to: end`, as the hook did); a nudge is sent with the call and kept in
the history just before the response, where the hook put it.

Progress itself (a source change, a recorded experiment) reaches the watchdog through
`TeamContext.progress`, from where it is seen (the events middleware, the plan tool). A
team paused while one of its members worked stops at its next model call too.
"""

from __future__ import annotations

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import HumanMessage
from langgraph.types import Command

from justkernel.agents.middleware.shared import Governance, ModelHandler, Place, Seat
from justkernel.core.events.runs import WatchdogNudge
from justkernel.core.reasons import Reason, ReasonCode

NUDGE_REASON = Reason.of(ReasonCode.WATCHDOG_NUDGE)
NUDGE = NUDGE_REASON.text()


class WatchdogMiddleware(AgentMiddleware):
    def __init__(self, seat: Seat | Place, governance: Governance) -> None:
        super().__init__()
        self.seat = seat
        self.gov = governance

    async def awrap_model_call(
        self, request: ModelRequest, handler: ModelHandler
    ) -> ModelResponse | ExtendedModelResponse:
        seat = self.seat.at(request.runtime)
        team = seat.team_id
        if seat.signals.pause_reason is not None:  # paused while a member worked
            return _end_turn()
        verdict = self.gov.watchdog.verdict(team)
        nudge: list[HumanMessage] = []
        if verdict == "pause":
            await seat.pause(self.gov, Reason.of(ReasonCode.WATCHDOG))
            return _end_turn()
        if verdict == "nudge":
            self.gov.watchdog.nudged(team)
            await seat.ctx.emit(
                WatchdogNudge(
                    message=NUDGE,
                    reason_code=NUDGE_REASON.code,
                    reason_params=NUDGE_REASON.params,
                )
            )
            nudge = [HumanMessage(content=NUDGE)]
            request = request.override(messages=[*request.messages, *nudge])
        response = await handler(request)
        self.gov.watchdog.on_response(team)
        if nudge:
            response.result = [*nudge, *response.result]
        return response


def _end_turn() -> ExtendedModelResponse:
    """No model call, and the turn ends here."""
    return ExtendedModelResponse(
        model_response=ModelResponse(result=[]), command=Command(update={"jump_to": "end"})
    )
