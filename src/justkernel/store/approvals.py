"""The rows of approval modes (tables `approval_requests`, `approval_grants`,
`approval_modes`): a request once per id, decided once (a conditional update, so two people
deciding at once cannot both win), grants added and revoked, a mode per team and per run.
What asks, the events and the caches are the desk's (`agents.approval_desk`)."""

from __future__ import annotations

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from justkernel.core.approvals import ApprovalMode
from justkernel.core.records.approvals import ApprovalRequest, Grant, TeamMode
from justkernel.core.statuses import ApprovalStatus
from justkernel.store.database import Database, where_given
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import approval_grants, approval_modes, approval_requests

RUN_DEFAULT = "*"  # the team id of a run's default mode


class ApprovalStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- requests --------------------------------------------------------------------------
    async def add_request(self, request: ApprovalRequest) -> tuple[ApprovalRequest, bool]:
        """Store a pending request; when its id is stored already (a resumed turn asking
        again), the stored one. True when it is new."""
        try:
            await self._db.write(
                insert(approval_requests).values(
                    id=request.id,
                    run_id=request.run_id,
                    team_id=request.team_id,
                    member=request.member,
                    tool=request.tool,
                    kind=request.kind,
                    args=request.args,
                    tool_call_id=request.tool_call_id,
                    mode=request.mode,
                    status=ApprovalStatus.PENDING.value,
                    remember=False,
                    created_at=request.created_at,
                )
            )
        except IntegrityError:
            stored = await self.request(request.id)
            if stored is None:  # pragma: no cover - a conflict is a stored row
                raise
            return stored, False
        stored = await self.request(request.id)
        assert stored is not None
        return stored, True

    async def request(self, request_id: str) -> ApprovalRequest | None:
        return await self._db.record(
            ApprovalRequest, select(approval_requests).where(approval_requests.c.id == request_id)
        )

    async def requests(
        self,
        run_id: str,
        *,
        team_id: str | None = None,
        status: ApprovalStatus | None = None,
    ) -> list[ApprovalRequest]:
        """The run's requests (of a team, of a status), oldest first."""
        query = where_given(
            select(approval_requests).where(approval_requests.c.run_id == run_id),
            (approval_requests.c.team_id, team_id),
            (approval_requests.c.status, status.value if status is not None else None),
        )
        return await self._db.records(
            ApprovalRequest,
            query.order_by(approval_requests.c.created_at, approval_requests.c.id),
        )

    async def decide(
        self,
        request_id: str,
        status: ApprovalStatus,
        *,
        by: str,
        reason: str | None,
        remember: bool,
        grant: Grant | None = None,
    ) -> bool:
        """Decide a pending request (and add its grant) in one transaction; False when it is
        no longer pending (someone decided first), and then nothing is written."""
        async with self._db.writer.begin() as conn:
            result = await conn.execute(
                update(approval_requests)
                .where(
                    approval_requests.c.id == request_id,
                    approval_requests.c.status == ApprovalStatus.PENDING.value,
                )
                .values(
                    status=status.value,
                    decided_by=by,
                    reason=reason,
                    remember=remember,
                    grant_id=grant.id if grant is not None else None,
                    decided_at=utc_now_iso(),
                )
            )
            if result.rowcount != 1:
                return False
            if grant is not None:
                await conn.execute(insert(approval_grants).values(**_grant_row(grant)))
        return True

    # -- grants ----------------------------------------------------------------------------
    async def add_grant(self, grant: Grant) -> None:
        await self._db.write(insert(approval_grants).values(**_grant_row(grant)))

    async def grant(self, grant_id: str) -> Grant | None:
        return await self._db.record(
            Grant, select(approval_grants).where(approval_grants.c.id == grant_id)
        )

    async def grants(
        self, run_id: str, *, team_id: str | None = None, active_only: bool = True
    ) -> list[Grant]:
        query = where_given(
            select(approval_grants).where(approval_grants.c.run_id == run_id),
            (approval_grants.c.team_id, team_id),
        )
        if active_only:
            query = query.where(approval_grants.c.revoked_at.is_(None))
        return await self._db.records(
            Grant, query.order_by(approval_grants.c.created_at, approval_grants.c.id)
        )

    async def revoke(self, grant_id: str, *, by: str) -> bool:
        """Revoke an active grant; False when it is unknown or revoked already."""
        result = await self._db.write(
            update(approval_grants)
            .where(approval_grants.c.id == grant_id, approval_grants.c.revoked_at.is_(None))
            .values(revoked_by=by, revoked_at=utc_now_iso())
        )
        return result.rowcount == 1

    # -- modes -----------------------------------------------------------------------------
    async def set_mode(self, run_id: str, team_id: str, mode: ApprovalMode, *, by: str) -> None:
        """The team's mode (`RUN_DEFAULT`: the run's), replacing any earlier one."""
        values = {"mode": mode.value, "updated_by": by, "updated_at": utc_now_iso()}
        async with self._db.writer.begin() as conn:
            result = await conn.execute(
                update(approval_modes)
                .where(approval_modes.c.run_id == run_id, approval_modes.c.team_id == team_id)
                .values(**values)
            )
            if result.rowcount == 0:
                await conn.execute(
                    insert(approval_modes).values(run_id=run_id, team_id=team_id, **values)
                )

    async def modes(self, run_id: str) -> list[TeamMode]:
        """Every mode set in the run (the run's default under `RUN_DEFAULT`)."""
        return await self._db.records(
            TeamMode,
            select(approval_modes)
            .where(approval_modes.c.run_id == run_id)
            .order_by(approval_modes.c.team_id),
        )


def _grant_row(grant: Grant) -> dict[str, object]:
    return {
        "id": grant.id,
        "run_id": grant.run_id,
        "team_id": grant.team_id,
        "tool": grant.tool,
        "kind": grant.kind,
        "created_by": grant.created_by,
        "created_at": grant.created_at,
        "request_id": grant.request_id,
        "revoked_by": None,
        "revoked_at": None,
    }
