"""Human decisions on the Judger's nominations, taken from any lab process (the dashboard,
`justkernel judger approve`) without a running Judger: the decision is a state change of the
candidate in the database, which the running Judger reads on its next pass."""

from __future__ import annotations

from typing import Any

from justkernel.core.events.collab import JudgerApproval
from justkernel.core.statuses import CandidateStatus
from justkernel.lab import Lab
from justkernel.store.candidates import CandidateStore

DECISIONS = ("approved", "rejected")


class DecisionRefused(ValueError):
    """A human decision that cannot be taken: no such candidate, or it is not waiting."""


async def decide(
    lab: Lab,
    candidates: CandidateStore,
    run_id: str,
    candidate_id: str,
    decision: str,
    by: str,
) -> dict[str, Any]:
    """A human decision on a nomination that waits for approval, from any lab process (the
    dashboard, `justkernel judger approve`): the candidate moves in the database, which the
    running Judger reads on its next pass, and the decision is logged once. Returns the
    `judger.approval` event."""
    if decision not in DECISIONS:
        raise DecisionRefused("decision must be approved or rejected")
    try:
        cand = await candidates.get(run_id, candidate_id)
    except LookupError:
        raise DecisionRefused(f"no candidate {candidate_id!r} in run {run_id}") from None
    status = (
        CandidateStatus.APPROVED_PENDING if decision == "approved" else CandidateStatus.REJECTED
    )
    if not await candidates.transition(
        run_id, candidate_id, CandidateStatus.AWAITING_APPROVAL, status
    ):
        current = (await candidates.get(run_id, candidate_id)).status
        raise DecisionRefused(f"{cand.id} is {current}, not awaiting approval")
    event = await lab.events.append(
        run_id,
        JudgerApproval(candidate_id=candidate_id, decision=decision, by=by),
        dedup_key=f"judger.approval:{candidate_id}",
    )
    return event.to_dict()
