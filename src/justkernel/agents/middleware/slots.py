"""Model-call slots: a model call runs only while it holds one of its provider's slots.

The limiter caps concurrent calls run-wide and per provider type, so many teams can be in a turn
at once while only a few talk to a model; a connection (the seat's preset) paused for auth or
balance refuses the slot (`ProviderPaused`), which the events middleware records as the call's
error.
"""

from __future__ import annotations

from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse

from justkernel.agents.middleware.shared import Governance, ModelHandler, Place, Seat


class ModelCallSlotsMiddleware(AgentMiddleware):
    def __init__(self, seat: Seat | Place, governance: Governance) -> None:
        super().__init__()
        self.seat = seat
        self.gov = governance

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        async with self.gov.limiter.slot(self.seat.provider, self.seat.preset.name):
            return await handler(request)
