"""The scheduler's side of approval modes (issue #17, 4): a turn that ended in an approval
interrupt leaves its team `awaiting_approval` (no turn runs for it, so it holds no model slot);
once every card the turn asked is decided, the next turn resumes the interrupted calls with
`Command(resume={interrupt id: decision})` on the same thread. The checkpoint and the desk's
rows are durable, so a lab killed while a card waits resumes the same way after a restart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.types import Command, Interrupt

from justkernel.agents.approval_desk import ApprovalDesk, Decision
from justkernel.agents.middleware.approvals import approval_interrupt
from justkernel.store.teams import Team

AWAITING = "awaiting_approval"


@dataclass(frozen=True)
class Waiting:
    """The cards a turn waits for, as the team's status reason names them."""

    request_ids: list[str]
    tools: list[str]

    def reason(self) -> str:
        tools, ids = ", ".join(self.tools), ", ".join(self.request_ids)
        return f"waiting for a person to approve {tools} ({ids})"


def ours(interrupts: Iterable[Interrupt]) -> list[tuple[Interrupt, str]]:
    """The approval interrupts among `interrupts`, each with its request id."""
    found = []
    for item in interrupts:
        request_id = approval_interrupt(item.value)
        if request_id is not None:
            found.append((item, request_id))
    return found


def interrupted(result: Any) -> list[Interrupt]:
    """The interrupts an `ainvoke` result reports (LangGraph puts them under `__interrupt__`)."""
    if isinstance(result, dict):
        return list(result.get("__interrupt__") or ())
    return []


async def waiting_for(desk: ApprovalDesk, interrupts: Iterable[Interrupt]) -> Waiting | None:
    """The pending cards among the approval interrupts, or None when none is pending."""
    pending: list[str] = []
    tools: list[str] = []
    for _item, request_id in ours(interrupts):
        card = await desk.get(request_id)
        if card.pending:
            pending.append(request_id)
            tools.append(card.tool)
    return Waiting(pending, tools) if pending else None


async def resume_command(desk: ApprovalDesk, interrupts: Iterable[Interrupt]) -> Command[Any]:
    """The command that resumes every approval interrupt with its decision (call only once
    none is pending: `waiting_for` is None)."""
    values: dict[str, Any] = {}
    for item, request_id in ours(interrupts):
        decision = Decision.of(await desk.get(request_id))
        if decision is not None:
            values[item.id] = decision.resume_value()
    return Command(resume=values)


async def asking(desk: ApprovalDesk, run_id: str, teams: Sequence[Team]) -> set[str]:
    """The teams with a card still waiting (one read, and none while no team waits)."""
    if not any(t.status == AWAITING for t in teams):
        return set()
    return {card.team_id for card in await desk.pending(run_id)}
