"""Payloads of collaboration (the A2A board), the Judger and official results."""

from __future__ import annotations

from typing import Any, ClassVar

from justkernel.core.events.agents import Usage
from justkernel.core.events.base import EventPayload, Number, PayloadPart, described


class _CollabArea(EventPayload):
    AREA: ClassVar[str] = "Collaboration, Judger and official results"


class A2AMessage(_CollabArea):
    """A message was posted on the board."""

    KIND: ClassVar[str] = "a2a.message"
    TEAM: ClassVar[str] = "sender"
    message_id: str | None = described("")
    to: str | None = described('team id or "all"')
    recipients: list[str] | None = described("the teams it was delivered to")
    type: str | None = described("message, candidate, experience, feedback")
    summary: str | None = described("clipped")
    summary_code: str | None = described(
        "the summary as a code the page translates (feedback_own, feedback_public); absent "
        "for a team's own words and in older logs"
    )
    summary_params: dict[str, str] | None = described("the code's values (candidate, team, status)")
    sender: str | None = described("the sender when no team is (judger, lab); usually absent")


class A2ADelivered(_CollabArea):
    """A team's inbox read handed it a message."""

    KIND: ClassVar[str] = "a2a.delivered"
    TEAM: ClassVar[str] = "recipient"
    message_id: str | None = described("")
    sender: str | None = described("")
    type: str | None = described("")


class A2AAcked(_CollabArea):
    """The agent's history holds a delivered message: it was seen, once."""

    KIND: ClassVar[str] = "a2a.acked"
    TEAM: ClassVar[str] = "recipient"
    message_id: str | None = described("")
    sender: str | None = described("usually absent")


class A2AReleased(_CollabArea):
    """The read that delivered a message never returned to the agent (a crash, a failed
    call), so it is pending again and delivered by a later read."""

    KIND: ClassVar[str] = "a2a.released"
    TEAM: ClassVar[str] = "recipient"
    message_id: str | None = described("")
    call_id: str | None = described("the tool call whose result was lost")


class A2AEvaluation(_CollabArea):
    """An outside team's submission over A2A was evaluated (see docs/a2a.md)."""

    KIND: ClassVar[str] = "a2a.evaluation"
    TEAM: ClassVar[str] = "id"
    task_id: str | None = described("")
    status: str | None = described("")
    detail: str | None = described("")
    receipt_id: str | None = described("")
    source_sha256: str | None = described("")
    cache_hit: bool | None = described("")
    cases_passed: int | None = described("")
    cases_run: int | None = described("")
    failed_cases: list[str] | None = described("case ids")
    cycles: dict[str, int | None] | None = described("estimated cycles per performance case")
    total_est_cycles: int | None = described("")
    candidate_id: str | None = described("null unless it was frozen")
    blobs: list[str] | None = described("[SHA-256 of the full receipt JSON]")


class CandidateFrozen(_CollabArea):
    """A team's measured source was frozen as a candidate for the Judger."""

    KIND: ClassVar[str] = "candidate.frozen"
    TEAM: ClassVar[str] = "id"
    candidate_id: str | None = described("")
    source_sha256: str | None = described("")
    tree_sha256: str | None = described("usually absent")
    commit: str | None = described("")
    receipt_key: str | None = described("")
    cycles_sum: int | None = described("")
    local_passed: bool | None = described(
        "false: compiled but failed local precision, frozen only under the official-driven strategy"
    )
    parent_id: str | None = described(
        "the earlier candidate of this run whose source is closest (decided by the lab); "
        "null for a first candidate and in runs recorded before lineage"
    )
    parent_kind: str | None = described(
        "own: the team's previous candidate; adopted: a public candidate it fetched"
    )
    blobs: list[str] | None = described("[SHA-256 of the frozen source archive]")


class JudgerReview(_CollabArea):
    """The Judger reviewed a frozen candidate."""

    KIND: ClassVar[str] = "judger.review"
    candidate_id: str | None = described("")
    team: str | None = described("")
    verdict: str | None = described("accepted, rejected")
    reasons: list[str] | None = described("")
    notes: list[str] | None = described(
        'e.g. "local precision not fully verified", "model review unavailable: ..."'
    )
    reviewer: str | None = described("`rules`, or `rules+model:<preset>`")


class ProviderErrorPart(PayloadPart):
    kind: str | None = None
    message: str | None = None
    status: int | None = None
    code: str | None = None


class JudgerModelReview(_CollabArea):
    """What the Judger's model said of a candidate's diff."""

    KIND: ClassVar[str] = "judger.model_review"
    verdict: str | None = described("accept, reject, unavailable")
    reviewer: str | None = described("preset")
    reasons: list[str] | None = described("")
    notes: list[str] | None = described("")
    usage: Usage | None = described("as the provider reported it, or null")
    error: ProviderErrorPart | None = described("classified provider failure, or null")
    seconds: Number | None = described("")


class JudgerNomination(_CollabArea):
    """The Judger chose a candidate to submit next."""

    KIND: ClassVar[str] = "judger.nomination"
    candidate_id: str | None = described("")
    team: str | None = described("")
    cycles_sum: int | None = described("")
    champion_cycles: int | None = described(
        "the local cycles to beat: the champion's and those of submissions still pending"
    )
    local_passed: bool | None = described("")
    awaiting_approval: bool | None = described("true: a person must approve it first")


class JudgerApproval(_CollabArea):
    """A person decided on a nomination that waited for approval."""

    KIND: ClassVar[str] = "judger.approval"
    candidate_id: str | None = described("")
    decision: str | None = described("approved, rejected")
    by: str | None = described("")


class JudgerSubmission(_CollabArea):
    """The Judger submitted a candidate to the judge."""

    KIND: ClassVar[str] = "judger.submission"
    candidate_id: str | None = described("")
    team: str | None = described("")
    submission_id: str | None = described("")
    backend: str | None = described("local, official")
    source_sha256: str | None = described("")
    note: str | None = described(
        '"local precision not fully verified" for a diagnosis submission, else empty'
    )
    resent: bool | None = described(
        "true: sent again after a crash or a lost answer, under its stored idempotency key"
    )
    quota_used: int | None = described("")
    quota_limit: int | None = described("")


class JudgerUnavailable(_CollabArea):
    """A run started from the dashboard has no Judger."""

    KIND: ClassVar[str] = "judger.unavailable"
    detail: str | None = described("why: the judge could not be reached or configured")


class Point(PayloadPart):
    """One official test point; null where the judge gave nothing."""

    id: Any = None
    passed: bool | None = None
    error_ratio: Number | None = None
    error_bucket: str | None = None
    time_us: Number | None = None
    best_time_us: Number | None = None
    outcome: str | None = None


class OfficialResult(_CollabArea):
    """The judge's result of a submission."""

    KIND: ClassVar[str] = "official.result"
    TEAM: ClassVar[str] = "submitting team"
    submission_id: str | None = described("")
    candidate_id: str | None = described("")
    source_sha256: str | None = described("")
    status: str | None = described("official_pass, official_fail")
    points: list[Point] | None = described("null where the judge gave nothing")
    prof_sum_us: Number | None = described("")
    sota_changed: bool | None = described("true: it beat the best official pass")
    backend: str | None = described("local, official")
    outcome: str | None = described(
        "the evaluation's status code (passed, incorrect, compile_failed, ...); null: not given"
    )
    diagnostics: list[str] | None = described(
        "the compiler's first lines when it failed (the judge passes no run output on)"
    )
