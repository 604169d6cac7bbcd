"""The budget: each model call reserves its tokens and cost before it runs and settles them
with what the provider reported after; a call the caps refuse pauses the team instead.

Reserving first means calls running at once cannot together cross a cap, so the estimate leans
high (see `estimate_input_tokens`); settling gives back what the call did not use.
"""

from __future__ import annotations

import json

from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage

from justkernel.agents.middleware.shared import (
    Governance,
    ModelHandler,
    Place,
    Seat,
    TeamPaused,
    content_text,
)
from justkernel.agents.usage import cost_usd, usage_from_message
from justkernel.governance.budget import BudgetExceeded

DEFAULT_OUTPUT_ESTIMATE = 2048  # tokens reserved for a reply when the preset sets no limit


def tool_name(tool: object) -> str:
    """A tool's name, or its text when it has none (a provider's built-in tool, a dict). Not
    `getattr(tool, "name", str(tool))`: that renders every tool's whole repr at every step."""
    name = getattr(tool, "name", None)
    return name if isinstance(name, str) else str(tool)


class BudgetMiddleware(AgentMiddleware):
    def __init__(self, seat: Seat | Place, governance: Governance) -> None:
        super().__init__()
        self.seat = seat
        self.gov = governance

    def estimate_input_tokens(self, request: ModelRequest) -> int:
        """An upper-leaning guess of the prompt size, so budget reservations rarely fall short:
        the larger of a characters/4 count (messages, system prompt, tool schemas) and the
        last prompt the provider reported for this agent or, before that, for its provider
        (a conversation only grows)."""
        chars = sum(len(content_text(m.content)) for m in request.messages)
        if request.system_message is not None:
            chars += len(content_text(request.system_message.content))
        chars += len(json.dumps([tool_name(t) for t in request.tools]))
        seat = self.seat.at(request.runtime)
        last = seat.last_input_tokens.get(seat.member, 0)  # this agent's, kept by its team
        observed = last or self.gov.seen_input_tokens.get(seat.provider, 0)
        return max(chars // 4 + 1, observed)

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        seat = self.seat.at(request.runtime)
        est_in = self.estimate_input_tokens(request)
        est_out = seat.preset.max_output_tokens or DEFAULT_OUTPUT_ESTIMATE
        try:
            reservation = self.gov.budget.reserve(
                seat.team_id,
                seat.provider,
                est_in + est_out,
                cost_usd(seat.preset, est_in, est_out),
            )
        except BudgetExceeded as exc:
            await seat.pause(self.gov, exc.reason)
            raise TeamPaused(exc.reason) from exc
        try:
            response = await handler(request)
        except Exception:
            self.gov.budget.settle(reservation, None, None)
            raise
        message = next((m for m in response.result if isinstance(m, AIMessage)), None)
        usage = usage_from_message(seat.preset, message) if message is not None else None
        if usage is not None:
            seat.last_input_tokens[seat.member] = usage.input_tokens
            self.gov.seen_input_tokens[seat.provider] = usage.input_tokens
        self.gov.budget.settle(
            reservation, usage.total if usage else None, usage.cost_usd if usage else None
        )
        return response
