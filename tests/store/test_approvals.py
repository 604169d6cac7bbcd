"""ApprovalStore's rows on SQLite and PostgreSQL: a request stored once per id, decided once
(the second decision finds it decided and writes nothing), a remembered grant written with its
decision, grants revoked once, a mode per team and per run; a team's status holds
`awaiting_approval` (PostgreSQL held 16 characters before migration 0009)."""

from __future__ import annotations

from justkernel.core.approvals import ApprovalMode
from justkernel.core.records.approvals import ApprovalRequest, Grant
from justkernel.core.statuses import ApprovalStatus
from justkernel.lab import Lab
from justkernel.store.approvals import RUN_DEFAULT


def _request(run_id: str, number: int, team: str = "team-001") -> ApprovalRequest:
    return ApprovalRequest(
        id=f"apr-{number}",
        run_id=run_id,
        team_id=team,
        tool="simulate_kernel",
        kind="full",
        args={"mode": "full", "note": "渲染"},
        tool_call_id=f"call-{number}",
        mode="ask",
        status=ApprovalStatus.PENDING,
        created_at=f"2026-12-06T00:00:0{number}",
    )


def _grant(run_id: str, grant_id: str) -> Grant:
    return Grant(
        id=grant_id,
        run_id=run_id,
        team_id="team-001",
        tool="simulate_kernel",
        kind="full",
        created_by="ana",
        created_at="2026-12-06T00:01:00",
        request_id="apr-1",
    )


async def test_a_request_is_stored_once_and_decided_once(lab: Lab) -> None:
    run = await lab.runs.create("approval rows")
    rows = lab.approvals
    first, new = await rows.add_request(_request(run.id, 1))
    assert new and first.pending and first.args == {"mode": "full", "note": "渲染"}
    again, new = await rows.add_request(_request(run.id, 1))
    assert not new and again == first
    await rows.add_request(_request(run.id, 2, team="team-002"))
    assert [r.id for r in await rows.requests(run.id)] == ["apr-1", "apr-2"]
    assert [r.id for r in await rows.requests(run.id, team_id="team-002")] == ["apr-2"]

    grant = _grant(run.id, "grant-a")
    assert await rows.decide(
        "apr-1", ApprovalStatus.APPROVED, by="ana", reason="fine", remember=True, grant=grant
    )
    # a second decision (another person, another process) loses and writes no grant
    assert not await rows.decide(
        "apr-1",
        ApprovalStatus.REJECTED,
        by="bo",
        reason=None,
        remember=True,
        grant=_grant(run.id, "grant-b"),
    )
    decided = await rows.request("apr-1")
    assert decided is not None and decided.status is ApprovalStatus.APPROVED
    assert (decided.decided_by, decided.reason, decided.remember, decided.grant_id) == (
        "ana",
        "fine",
        True,
        "grant-a",
    )
    pending = await rows.requests(run.id, status=ApprovalStatus.PENDING)
    assert [r.id for r in pending] == ["apr-2"]
    assert [g.id for g in await rows.grants(run.id)] == ["grant-a"]
    assert await rows.grant("grant-b") is None


async def test_grants_are_revoked_once_and_modes_are_kept_per_team(lab: Lab) -> None:
    run = await lab.runs.create("approval grants")
    rows = lab.approvals
    await rows.add_grant(_grant(run.id, "grant-a"))
    assert await rows.revoke("grant-a", by="ana")
    assert not await rows.revoke("grant-a", by="ana")
    assert not await rows.revoke("grant-none", by="ana")
    assert await rows.grants(run.id) == []
    (revoked,) = await rows.grants(run.id, active_only=False)
    assert revoked.revoked_by == "ana" and not revoked.active

    await rows.set_mode(run.id, RUN_DEFAULT, ApprovalMode.ASK, by="cli")
    await rows.set_mode(run.id, "team-001", ApprovalMode.READ_ONLY, by="cli")
    await rows.set_mode(run.id, "team-001", ApprovalMode.AUTO, by="web")
    modes = {m.team_id: (m.mode, m.updated_by) for m in await rows.modes(run.id)}
    assert modes == {RUN_DEFAULT: (ApprovalMode.ASK, "cli"), "team-001": (ApprovalMode.AUTO, "web")}


async def test_a_team_status_holds_awaiting_approval(lab: Lab, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = await lab.runs.create("awaiting")
    team = await lab.teams.register(
        run.id, model_preset="offline", model_label="Offline", workspaces_dir=tmp_path, config={}
    )
    await lab.teams.set_status(run.id, team.id, "awaiting_approval", "simulate_kernel")
    (listed,) = await lab.teams.list(run.id)
    assert (listed.status, listed.status_reason) == ("awaiting_approval", "simulate_kernel")
