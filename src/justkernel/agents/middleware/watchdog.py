"""The stall watchdog at the model's door: before each call it nudges a team that made no
progress for a while, or pauses it; after each answered call it counts one response.

Progress itself (a source change, a recorded experiment) reaches the watchdog through
`TeamContext.progress`, from where it is seen (the events middleware, the plan tool). A
team paused while one of its members worked stops at its next model call too.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    hook_config,
)
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from justkernel.agents.middleware.shared import Governance, ModelHandler, Place, Seat
from justkernel.core.events.runs import WatchdogNudge

NUDGE = (
    "Watchdog: no progress for a while (no source change and no new experiment). "
    "Record an experiment plan and change the kernel, or simulate, instead of reading more."
)


class WatchdogMiddleware(AgentMiddleware):
    def __init__(self, seat: Seat | Place, governance: Governance) -> None:
        super().__init__()
        self.seat = seat
        self.gov = governance

    @hook_config(can_jump_to=["end"])
    async def abefore_model(
        self, state: AgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        seat = self.seat.at(runtime)
        if seat.signals.pause_reason is not None:  # paused while a member worked
            return {"jump_to": "end"}
        team = seat.team_id
        verdict = self.gov.watchdog.verdict(team)
        if verdict == "pause":
            await seat.pause(self.gov, "no progress: paused by the stall watchdog")
            return {"jump_to": "end"}
        if verdict == "nudge":
            self.gov.watchdog.nudged(team)
            await seat.ctx.emit(WatchdogNudge(message=NUDGE))
            return {"messages": [HumanMessage(content=NUDGE)]}
        return None

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        response = await handler(request)
        self.gov.watchdog.on_response(self.seat.at(request.runtime).team_id)
        return response
