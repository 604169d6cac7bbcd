"""Payloads of approval modes for a supervised team (issue #17, 4): a tool call that asked a
person, the decision, remembered grants and mode changes. Kept apart from the Judger's own
approval of nominations (`judger.approval`), which is another gate on another object."""

from __future__ import annotations

from typing import Any, ClassVar

from justkernel.core.events.base import EventPayload, described


class _ApprovalArea(EventPayload):
    AREA: ClassVar[str] = "Approvals of a supervised team"
    TEAM: ClassVar[str] = "id"


class ApprovalRequested(_ApprovalArea):
    """A team's tool call waits for a person (its mode asks, no grant covers it); the turn
    ends in an interrupt and the team is `awaiting_approval`."""

    KIND: ClassVar[str] = "approval.requested"
    request_id: str | None = described("")
    tool: str | None = described("the tool's name")
    kind: str | None = described('a simulation\'s mode ("full"); null for other tools')
    args: dict[str, Any] | None = described("the call's arguments, scrubbed and clipped")
    mode: str | None = described("read_only, ask")
    member: str | None = described("the member whose call it is; null: the team's own")


class ApprovalDecided(_ApprovalArea):
    """A person approved or rejected a waiting call; the team's turn resumes with it."""

    KIND: ClassVar[str] = "approval.decided"
    request_id: str | None = described("")
    tool: str | None = described("")
    kind: str | None = described("")
    decision: str | None = described("approved, rejected")
    by: str | None = described("who decided (cli, dashboard, a name)")
    reason: str | None = described("the person's words, clipped")
    remember: bool | None = described("true: the approval became a grant")
    grant_id: str | None = described("the grant it added, if any")


class ApprovalGrantAdded(_ApprovalArea):
    """A remembered approval: the team's later calls of the tool (of the kind) pass."""

    KIND: ClassVar[str] = "approval.grant_added"
    grant_id: str | None = described("")
    tool: str | None = described("")
    kind: str | None = described("null: any call of the tool")
    by: str | None = described("")
    request_id: str | None = described("the decision it came from")


class ApprovalGrantRevoked(_ApprovalArea):
    """A grant was revoked: the team's calls of the tool ask again."""

    KIND: ClassVar[str] = "approval.grant_revoked"
    grant_id: str | None = described("")
    tool: str | None = described("")
    kind: str | None = described("")
    by: str | None = described("")


class ApprovalModeChanged(_ApprovalArea):
    """A team's approval mode changed (no team: the run's default for its teams)."""

    KIND: ClassVar[str] = "approval.mode_changed"
    mode: str | None = described("read_only, ask, auto")
    previous: str | None = described("")
    by: str | None = described("")
