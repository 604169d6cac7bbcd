"""Approval modes of a supervised team, folded from their events (issue #17, 4): each card a
tool call raised, each person's decision on it, revoked grants and mode changes, in log order.
Part of `fold.RunState`; the report's Approvals section lists them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from justkernel.core.events.approvals import (
    ApprovalDecided,
    ApprovalGrantRevoked,
    ApprovalModeChanged,
    ApprovalRequested,
)
from justkernel.events import Event


def _what(tool: str | None, kind: str | None) -> str:
    return f"{tool or '?'} ({kind})" if kind else tool or "?"


@dataclass
class ApprovalsFold:
    cards: dict[str, dict[str, Any]] = field(default_factory=dict)  # by request id
    decisions: list[dict[str, Any]] = field(default_factory=list)  # in log order

    def requested(self, event: Event, p: ApprovalRequested) -> None:
        self.cards[p.request_id or f"#{event.seq}"] = {
            "seq": event.seq,
            "team": event.team,
            "what": _what(p.tool, p.kind),
            "status": "pending",
        }

    def decided(self, event: Event, p: ApprovalDecided) -> None:
        decision = p.decision or "?"
        card = self.cards.get(p.request_id or "")
        if card is not None:
            card["status"] = decision
        self._add(
            event,
            p.request_id,
            _what(p.tool, p.kind),
            f"{decision}, remembered" if p.remember else decision,
            p.by,
            p.reason,
        )

    def grant_revoked(self, event: Event, p: ApprovalGrantRevoked) -> None:
        self._add(event, p.grant_id, _what(p.tool, p.kind), "grant revoked", p.by, None)

    def mode_changed(self, event: Event, p: ApprovalModeChanged) -> None:
        what = f"{p.previous or '?'} → {p.mode or '?'}"
        self._add(event, None, what, "mode changed", p.by, None)

    def _add(
        self,
        event: Event,
        ref: str | None,
        what: str,
        decision: str,
        by: str | None,
        reason: str | None,
    ) -> None:
        self.decisions.append(
            {
                "seq": event.seq,
                "ref": ref,
                "team": event.team,
                "what": what,
                "decision": decision,
                "by": by,
                "reason": reason,
            }
        )

    def rows(self) -> list[dict[str, Any]]:
        """Every decision, and every card still waiting, in log order."""
        waiting = [
            {"seq": c["seq"], "ref": rid, "team": c["team"], "what": c["what"],
             "decision": "pending", "by": None, "reason": None}
            for rid, c in self.cards.items()
            if c["status"] == "pending"
        ]  # fmt: skip
        return sorted([*self.decisions, *waiting], key=lambda r: r["seq"])
