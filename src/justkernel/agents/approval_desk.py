"""The approval desk: the one object the middleware, the scheduler, the CLI and the web use for
approval modes of a supervised team (issue #17, 4). It keeps the rows (`store.approvals`),
writes an event for every request, decision, grant and mode change, and caches each run's
modes and grants, so an ordinary tool call asks nothing of the database: the middleware reads
the cache (`check`), and the scheduler refreshes it once per dispatch pass (a person may change
a mode from another process, the CLI).

Which calls ask is `core.approvals`'; a decision is taken once (the store's conditional
update), and what a resumed turn is handed is `Decision.resume_value()`.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from justkernel.core.approvals import (
    DEFAULT_MODE,
    ApprovalMode,
    GrantKey,
    call_kind,
    card_args,
    covered,
    needs_approval,
    parse_mode,
)
from justkernel.core.events.approvals import (
    ApprovalDecided,
    ApprovalGrantAdded,
    ApprovalGrantRevoked,
    ApprovalModeChanged,
    ApprovalRequested,
)
from justkernel.core.records.approvals import ApprovalRequest, Grant
from justkernel.core.statuses import ApprovalStatus
from justkernel.events import EventLog
from justkernel.lab import Lab
from justkernel.settings.redaction import scrub
from justkernel.store.approvals import RUN_DEFAULT, ApprovalStore
from justkernel.store.runs import utc_now_iso

REASON_LIMIT = 1000


class UnknownApproval(LookupError):
    """No request or grant has this id (in this run, when one is named)."""


class ApprovalRefused(ValueError):
    """The decision cannot be taken: the request was decided already, say."""


@dataclass(frozen=True)
class Decision:
    """What a person decided on one request, as the interrupted turn is resumed with it."""

    request_id: str
    approved: bool
    by: str
    reason: str | None

    def resume_value(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "decision": "approved" if self.approved else "rejected",
            "by": self.by,
            "reason": self.reason,
        }

    @classmethod
    def of(cls, request: ApprovalRequest) -> Decision | None:
        """The decision a decided request holds; None while it is pending."""
        if request.pending:
            return None
        return cls(
            request.id,
            request.status is ApprovalStatus.APPROVED,
            request.decided_by or "",
            request.reason,
        )


def request_id_for(run_id: str, team_id: str, call_key: str) -> str:
    """The id of a call's request: the same call asks with the same id after a resume (the
    node re-runs up to its interrupt) or a crash, so it is one card, not two."""
    digest = hashlib.sha256(f"{run_id}\0{team_id}\0{call_key}".encode()).hexdigest()
    return f"apr-{digest[:16]}"


def _grant(
    run_id: str, team_id: str, tool: str, kind: str | None, by: str, request_id: str | None
) -> Grant:
    return Grant(
        id=f"grant-{secrets.token_hex(6)}",
        run_id=run_id,
        team_id=team_id,
        tool=tool,
        kind=kind,
        created_by=by,
        created_at=utc_now_iso(),
        request_id=request_id,
    )


@dataclass
class _RunCache:
    modes: dict[str, ApprovalMode]
    grants: list[GrantKey]


class ApprovalDesk:
    def __init__(self, store: ApprovalStore, events: EventLog) -> None:
        self.store = store
        self.events = events
        self._cache: dict[str, _RunCache] = {}

    @classmethod
    def of(cls, lab: Lab) -> ApprovalDesk:
        return cls(lab.approvals, lab.events)

    # -- the cache the middleware reads ----------------------------------------------------
    async def refresh(self, run_id: str) -> None:
        """Read the run's modes and active grants again (one read each): what another process
        changed counts from here on."""
        modes = {m.team_id: m.mode for m in await self.store.modes(run_id)}
        grants = [g.key for g in await self.store.grants(run_id)]
        self._cache[run_id] = _RunCache(modes, grants)

    async def _cached(self, run_id: str) -> _RunCache:
        if run_id not in self._cache:
            await self.refresh(run_id)
        return self._cache[run_id]

    async def check(
        self,
        run_id: str,
        team_id: str,
        tool_name: str,
        args: Mapping[str, Any],
        *,
        declared: bool | None = None,
    ) -> ApprovalMode | None:
        """The mode that makes this call ask, or None when it may run now (its mode does not
        ask for it, or a grant covers it). Reads the cache only (after the run's first call)."""
        cache = await self._cached(run_id)
        mode = cache.modes.get(team_id) or cache.modes.get(RUN_DEFAULT) or DEFAULT_MODE
        if mode is ApprovalMode.AUTO:
            return None
        if not needs_approval(mode, tool_name, args, declared=declared):
            return None
        if covered(cache.grants, team_id, tool_name, args):
            return None
        return mode

    # -- requests --------------------------------------------------------------------------
    async def request(
        self,
        run_id: str,
        team_id: str,
        tool_name: str,
        args: Mapping[str, Any],
        tool_call_id: str,
        *,
        mode: ApprovalMode | str,
        member: str | None = None,
    ) -> ApprovalRequest:
        """The request of this call: stored (and its `approval.requested` written) on its
        first ask, the stored one on every later ask of the same call."""
        call_key = tool_call_id if member is None else f"{member}:{tool_call_id}"
        draft = ApprovalRequest(
            id=request_id_for(run_id, team_id, call_key),
            run_id=run_id,
            team_id=team_id,
            tool=tool_name,
            kind=call_kind(tool_name, args),
            args=card_args(args, scrub),
            tool_call_id=tool_call_id,
            mode=ApprovalMode(mode).value,
            status=ApprovalStatus.PENDING,
            created_at=utc_now_iso(),
            member=member,
        )
        stored, new = await self.store.add_request(draft)
        if new:
            await self.events.append(
                run_id,
                ApprovalRequested(
                    request_id=stored.id,
                    tool=stored.tool,
                    kind=stored.kind,
                    args=stored.args,
                    mode=stored.mode,
                    member=member,
                ),
                team=team_id,
                dedup_key=f"approval.requested:{stored.id}",
            )
        return stored

    async def get(self, request_id: str, run_id: str | None = None) -> ApprovalRequest:
        """The request (of `run_id`, when given); UnknownApproval otherwise."""
        found = await self.store.request(request_id)
        if found is None or (run_id is not None and found.run_id != run_id):
            where = f" in run {run_id}" if run_id is not None else ""
            raise UnknownApproval(f"no approval request {request_id!r}{where}")
        return found

    async def pending(self, run_id: str, team_id: str | None = None) -> list[ApprovalRequest]:
        """The run's requests waiting for a person (a team's, when given), oldest first."""
        return await self.store.requests(run_id, team_id=team_id, status=ApprovalStatus.PENDING)

    async def requests(self, run_id: str, team_id: str | None = None) -> list[ApprovalRequest]:
        """Every request of the run, decided or not, oldest first (the run report's)."""
        return await self.store.requests(run_id, team_id=team_id)

    async def decide(
        self,
        request_id: str,
        approve: bool,
        remember: bool = False,
        by: str = "person",
        reason: str | None = None,
        *,
        run_id: str | None = None,
    ) -> ApprovalRequest:
        """Approve or reject a pending request, once; `remember` (only with an approval) adds a
        grant for the team's later calls of the tool (of the call's kind). Writes
        `approval.decided` (and `approval.grant_added`). UnknownApproval for an unknown id,
        ApprovalRefused when it was decided already or `remember` comes with a rejection."""
        found = await self.get(request_id, run_id)
        if remember and not approve:
            raise ApprovalRefused("only an approval can be remembered")
        if not found.pending:
            raise ApprovalRefused(f"approval request {request_id} was {found.status} already")
        by = (by or "person")[:100]
        reason = scrub(reason)[:REASON_LIMIT] if reason else None
        grant = self._new_grant(found, by) if remember else None
        status = ApprovalStatus.APPROVED if approve else ApprovalStatus.REJECTED
        won = await self.store.decide(
            request_id, status, by=by, reason=reason, remember=remember, grant=grant
        )
        if not won:
            current = await self.get(request_id)
            raise ApprovalRefused(f"approval request {request_id} was {current.status} already")
        await self.events.append(
            found.run_id,
            ApprovalDecided(
                request_id=request_id,
                tool=found.tool,
                kind=found.kind,
                decision=status.value,
                by=by,
                reason=reason,
                remember=remember,
                grant_id=grant.id if grant else None,
            ),
            team=found.team_id,
        )
        if grant is not None:
            await self._grant_added(grant)
        return await self.get(request_id)

    # -- grants ----------------------------------------------------------------------------
    def _new_grant(self, request: ApprovalRequest, by: str) -> Grant:
        return _grant(request.run_id, request.team_id, request.tool, request.kind, by, request.id)

    async def _grant_added(self, grant: Grant) -> None:
        if grant.run_id in self._cache:
            self._cache[grant.run_id].grants.append(grant.key)
        await self.events.append(
            grant.run_id,
            ApprovalGrantAdded(
                grant_id=grant.id,
                tool=grant.tool,
                kind=grant.kind,
                by=grant.created_by,
                request_id=grant.request_id,
            ),
            team=grant.team_id,
        )

    async def add_grant(
        self, run_id: str, team_id: str, tool: str, kind: str | None = None, *, by: str
    ) -> Grant:
        """A grant given up front, without a request (a person trusts the team's calls)."""
        grant = _grant(run_id, team_id, tool, kind, by[:100], None)
        await self.store.add_grant(grant)
        await self._grant_added(grant)
        return grant

    async def grants(self, run_id: str, team_id: str | None = None) -> list[Grant]:
        """The run's active grants (a team's, when given), oldest first."""
        return await self.store.grants(run_id, team_id=team_id)

    async def revoke(
        self, grant_id: str, by: str = "person", *, run_id: str | None = None
    ) -> Grant:
        """Revoke an active grant: the team's calls of the tool ask again. UnknownApproval
        for an unknown (or already revoked) grant."""
        grant = await self.store.grant(grant_id)
        if grant is None or (run_id is not None and grant.run_id != run_id):
            raise UnknownApproval(f"no grant {grant_id!r}")
        if not await self.store.revoke(grant_id, by=by[:100]):
            raise UnknownApproval(f"grant {grant_id!r} was revoked already")
        await self.events.append(
            grant.run_id,
            ApprovalGrantRevoked(grant_id=grant.id, tool=grant.tool, kind=grant.kind, by=by),
            team=grant.team_id,
        )
        await self.refresh(grant.run_id)
        return grant

    # -- modes -----------------------------------------------------------------------------
    async def mode(self, run_id: str, team_id: str | None = None) -> ApprovalMode:
        """The team's mode, read from the store (the run's default when the team has none
        of its own; `auto` when neither is set). No team: the run's default."""
        modes = {m.team_id: m.mode for m in await self.store.modes(run_id)}
        if team_id is not None and team_id in modes:
            return modes[team_id]
        return modes.get(RUN_DEFAULT, DEFAULT_MODE)

    async def modes(self, run_id: str) -> dict[str, ApprovalMode]:
        """Every mode set in the run, by team id (`*`: the run's default)."""
        return {m.team_id: m.mode for m in await self.store.modes(run_id)}

    async def set_mode(
        self,
        run_id: str,
        team_id: str | None,
        mode: ApprovalMode | str,
        by: str = "person",
    ) -> ApprovalMode:
        """Set a team's mode (None: the run's default for teams without their own); writes
        `approval.mode_changed`. ValueError for an unknown mode."""
        chosen = mode if isinstance(mode, ApprovalMode) else parse_mode(mode)
        previous = await self.mode(run_id, team_id)
        await self.store.set_mode(run_id, team_id or RUN_DEFAULT, chosen, by=by[:100])
        await self.events.append(
            run_id,
            ApprovalModeChanged(mode=chosen.value, previous=previous.value, by=by),
            team=team_id,
        )
        await self.refresh(run_id)
        return chosen
