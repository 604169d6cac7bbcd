"""Approval rows as records with no I/O (tables `approval_requests`, `approval_grants`,
`approval_modes`): the store maps rows onto them, the desk, the CLI and the API show them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from justkernel.core.approvals import ApprovalMode, GrantKey
from justkernel.core.records.base import Record
from justkernel.core.statuses import ApprovalStatus


@dataclass(frozen=True)
class ApprovalRequest(Record):
    """One tool call waiting for (or decided by) a person. `args` are the card's: scrubbed
    and clipped (`core.approvals.card_args`), never the raw call."""

    PUBLIC: ClassVar = {"tool_call_id": None}  # the agent's own id: nobody outside needs it

    id: str
    run_id: str
    team_id: str
    tool: str
    kind: str | None
    args: dict[str, Any]
    tool_call_id: str
    mode: str
    status: ApprovalStatus
    created_at: str
    member: str | None = None
    decided_by: str | None = None
    reason: str | None = None
    remember: bool = False
    grant_id: str | None = None
    decided_at: str | None = None

    @property
    def pending(self) -> bool:
        return self.status is ApprovalStatus.PENDING


@dataclass(frozen=True)
class Grant(Record):
    """A remembered approval: the team's later calls of `tool` (of `kind`, when set) pass."""

    id: str
    run_id: str
    team_id: str
    tool: str
    kind: str | None
    created_by: str
    created_at: str
    request_id: str | None = None
    revoked_by: str | None = None
    revoked_at: str | None = None

    @property
    def key(self) -> GrantKey:
        return GrantKey(self.team_id, self.tool, self.kind)

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class TeamMode(Record):
    """A team's approval mode (team_id "*": the run's default for its teams)."""

    run_id: str
    team_id: str
    mode: ApprovalMode
    updated_by: str
    updated_at: str
