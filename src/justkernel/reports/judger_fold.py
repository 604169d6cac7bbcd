"""The Judger's side of a run, folded from its events: each candidate from frozen through
review, nomination, human decision and submission to its official results, and the verified
state of the art. Part of `fold.RunState`, which links candidates and results to teams."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from justkernel.core.events import EventPayload
from justkernel.core.events.collab import (
    CandidateFrozen,
    JudgerApproval,
    JudgerNomination,
    JudgerReview,
    JudgerSubmission,
    OfficialResult,
)
from justkernel.events import Event

FROZEN_FIELDS = (
    "source_sha256", "tree_sha256", "commit", "receipt_key", "cycles_sum", "local_passed",
    "parent_id", "parent_kind",
)  # fmt: skip
SUBMISSION_FIELDS = ("submission_id", "backend", "source_sha256", "quota_used", "quota_limit")


def record(event: Event, p: EventPayload, *fields: str) -> dict[str, Any]:
    """When it happened (seq, ts) and the payload fields named (None where the model has
    no such field or the log lacks it)."""
    return {"seq": event.seq, "ts": event.ts, **{name: getattr(p, name, None) for name in fields}}


def _order(cand: dict[str, Any]) -> tuple[int, str]:
    frozen = cand.get("frozen") or {}
    seqs = [frozen.get("seq")] + [r["seq"] for r in cand["reviews"]]
    seqs += [r["seq"] for r in cand["results"]] + [r["seq"] for r in cand["submissions"]]
    first = min((s for s in seqs if isinstance(s, int)), default=10**12)
    return (first, cand["candidate_id"])


@dataclass
class JudgerFold:
    candidates: dict[str, dict[str, Any]] = field(default_factory=dict)
    official: list[dict[str, Any]] = field(default_factory=list)
    champion: dict[str, Any] | None = None

    def candidate(self, candidate_id: str | None, team: str | None = None) -> dict[str, Any]:
        key = candidate_id or "?"
        found = self.candidates.get(key)
        if found is None:
            found = self.candidates[key] = {
                "candidate_id": key,
                "team": None,
                "status": "frozen",
                "frozen": None,
                "reviews": [],
                "nomination": None,
                "approvals": [],
                "submissions": [],
                "results": [],
            }
        found["team"] = found["team"] or team
        return found

    def frozen(self, event: Event, p: CandidateFrozen) -> dict[str, Any]:
        cand = self.candidate(p.candidate_id, event.team)
        cand["frozen"] = record(event, p, *FROZEN_FIELDS)
        return cand

    def review(self, event: Event, p: JudgerReview) -> None:
        cand = self.candidate(p.candidate_id, p.team)
        cand["reviews"].append(
            {
                **record(event, p, "verdict", "reviewer"),
                "reasons": p.reasons or [],
                "notes": p.notes or [],
            }
        )
        # the store's statuses: an accepted review leaves the candidate "reviewed" (waiting
        # to beat the bar); "under_review" is only the moment of a review (statuses.py)
        cand["status"] = "reviewed" if p.verdict == "accepted" else "rejected"

    def nomination(self, event: Event, p: JudgerNomination) -> None:
        cand = self.candidate(p.candidate_id, p.team)
        waiting = bool(p.awaiting_approval)
        cand["nomination"] = {
            **record(event, p, "cycles_sum", "champion_cycles"),
            "awaiting_approval": waiting,
        }
        cand["status"] = "awaiting_approval" if waiting else "nominated"

    def approval(self, event: Event, p: JudgerApproval) -> None:
        cand = self.candidate(p.candidate_id)
        cand["approvals"].append(record(event, p, "decision", "by"))
        cand["status"] = "approved" if p.decision == "approved" else "rejected"

    def submission(self, event: Event, p: JudgerSubmission) -> None:
        cand = self.candidate(p.candidate_id, p.team)
        cand["submissions"].append(record(event, p, *SUBMISSION_FIELDS))
        cand["status"] = "submitted"

    def result(self, event: Event, p: OfficialResult) -> dict[str, Any]:
        result = {
            **record(event, p, "submission_id", "candidate_id", "source_sha256", "status"),
            "outcome": p.outcome,  # why it failed, as a code (compile_failed, ...)
            "diagnostics": list(p.diagnostics or []),
            "team": event.team,
            "points": [pt.to_payload() for pt in p.points or []],
            "prof_sum_us": p.prof_sum_us,
            "sota_changed": bool(p.sota_changed),
        }
        self.official.append(result)
        if p.candidate_id is not None:
            cand = self.candidate(p.candidate_id, event.team)
            cand["results"].append(result)
            cand["status"] = result["status"] or cand["status"]
        if result["sota_changed"] and result["status"] == "official_pass":
            self.champion = result
        return result

    def rows(self) -> list[dict[str, Any]]:
        """Candidates in the order they were frozen (or first seen)."""
        return sorted(self.candidates.values(), key=_order)
