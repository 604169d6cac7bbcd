"""The statuses a candidate and a lab submission row go through, as `StrEnum`s: a typo is an
AttributeError at import, not a row no query ever finds. Members compare equal to their text,
so stored rows, events and API bodies keep the same strings."""

from __future__ import annotations

from enum import StrEnum


class CandidateStatus(StrEnum):
    """A frozen candidate's way through the Judger (review, nomination, approval, judge)."""

    FROZEN = "frozen"
    UNDER_REVIEW = "under_review"  # left behind only by a crash mid-review
    REJECTED = "rejected"
    REVIEWED = "reviewed"
    NOMINATED = "nominated"
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED_PENDING = "approved_pending"  # a human approved; waits for the day's quota
    SUBMITTED = "submitted"
    OFFICIAL_PASS = "official_pass"
    OFFICIAL_FAIL = "official_fail"


class ApprovalStatus(StrEnum):
    """A supervised team's tool call waiting for a person (`core.approvals`)."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


class SubmissionStatus(StrEnum):
    """A lab submission row (table `submissions`): the submit window, then the judge's verdict.
    Not the judge service's own queue states (`evaluation.protocol.SubmissionStatus`)."""

    SUBMITTING = "submitting"  # reserved, maybe sent: the answer was never recorded
    SUBMITTED = "submitted"  # the judge holds it; its result is awaited
    OFFICIAL_PASS = "official_pass"
    OFFICIAL_FAIL = "official_fail"
    UNKNOWN = "unknown"  # reserved without a key: left for a human

    @property
    def in_flight(self) -> bool:
        """Reserved or sent, with no official result recorded yet."""
        return self in (SubmissionStatus.SUBMITTING, SubmissionStatus.SUBMITTED)
