"""`justkernel approvals list|approve|reject|grants|revoke|mode`: approval modes of a supervised
team (issue #17, 4) from a terminal. They act on the database every lab process shares
(through `agents.approval_desk`), so a running `justkernel run` or server picks a decision up
on its next dispatch pass and the waiting team goes on. Separate from `justkernel judger
approve|reject`, which decides on the Judger's nominations."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.table import Table

from justkernel.cli.common import console, fail, lab_context, run_async, settings_or_exit

if TYPE_CHECKING:
    from justkernel.agents.approval_desk import ApprovalDesk
    from justkernel.lab import Lab

T = TypeVar("T")
approvals_app = typer.Typer(help="Approval modes of supervised teams: cards, grants, modes.")
RunArg = Annotated[str, typer.Argument(metavar="RUN")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
By = Annotated[str, typer.Option(help="Who decides (shown in the event and the report).")]


def _with_desk(
    run_id: str, act: Callable[[Lab, ApprovalDesk], Awaitable[T]], *, writes: bool = False
) -> T:
    """`act` on the run's desk, with clear errors for an unknown run, team, card or grant."""
    from justkernel.agents.approval_desk import ApprovalDesk, ApprovalRefused, UnknownApproval
    from justkernel.store.runs import UnknownRun
    from justkernel.store.teams import UnknownTeam

    async def go() -> T:
        async with lab_context(settings_or_exit()) as lab:
            run = await lab.runs.get(run_id)
            if writes and run.read_only:
                fail(f"run {run_id} is a read-only {run.mode}")
            return await act(lab, ApprovalDesk.of(lab))

    try:
        return run_async(go)
    except UnknownRun as exc:
        fail(f"no run with id {exc}")
    except UnknownTeam as exc:
        fail(f"no team {exc}")
    except (UnknownApproval, ApprovalRefused, ValueError) as exc:
        fail(str(exc))


def _print_json(data: Any) -> None:
    console.print_json(json.dumps(data, ensure_ascii=False))


@approvals_app.command("list")
def list_cards(
    run_id: RunArg,
    all_: Annotated[bool, typer.Option("--all", help="Decided cards too.")] = False,
    as_json: AsJson = False,
) -> None:
    """The cards of a run that wait for a person (with --all, the decided ones too)."""

    async def act(_lab: Lab, desk: ApprovalDesk) -> list[Any]:
        return await (desk.requests(run_id) if all_ else desk.pending(run_id))

    cards = _with_desk(run_id, act)
    if as_json:
        _print_json([c.to_dict() for c in cards])
        return
    table = Table(title=f"approvals {'in' if all_ else 'waiting in'} {run_id}")
    for column in ("request", "team", "tool", "arguments", "status", "decided by", "reason"):
        table.add_column(column)
    for card in cards:
        args = json.dumps(card.args, ensure_ascii=False)
        table.add_row(
            card.id,
            card.team_id + (f" ({card.member})" if card.member else ""),
            card.tool + (f" ({card.kind})" if card.kind else ""),
            args if len(args) <= 80 else args[:80] + "…",
            str(card.status),
            card.decided_by or "",
            card.reason or "",
        )
    console.print(table)


def _decide(run_id: str, request_id: str, approve: bool, **how: Any) -> None:
    async def act(_lab: Lab, desk: ApprovalDesk) -> Any:
        return await desk.decide(request_id, approve, run_id=run_id, **how)

    card = _with_desk(run_id, act, writes=True)
    remembered = f", remembered as {card.grant_id}" if card.grant_id else ""
    console.print(f"{card.id}: {card.status} ({card.tool} of {card.team_id}{remembered})")


@approvals_app.command("approve")
def approve(
    run_id: RunArg,
    request_id: Annotated[str, typer.Argument(metavar="REQUEST")],
    remember: Annotated[
        bool, typer.Option(help="Let the team's later calls of this tool (kind) pass.")
    ] = False,
    reason: Annotated[str | None, typer.Option(help="A note for the team.")] = None,
    by: By = "cli",
) -> None:
    """Approve a waiting call: the team's turn goes on and the call runs."""
    _decide(run_id, request_id, True, remember=remember, by=by, reason=reason)


@approvals_app.command("reject")
def reject(
    run_id: RunArg,
    request_id: Annotated[str, typer.Argument(metavar="REQUEST")],
    reason: Annotated[str | None, typer.Option(help="Why: the team reads it.")] = None,
    by: By = "cli",
) -> None:
    """Reject a waiting call: the team is told, with the reason, and chooses another step."""
    _decide(run_id, request_id, False, by=by, reason=reason)


@approvals_app.command("grants")
def grants(
    run_id: RunArg,
    team: Annotated[str | None, typer.Option(help="Only this team's.")] = None,
    as_json: AsJson = False,
) -> None:
    """The run's remembered grants (not revoked)."""

    async def act(lab: Lab, desk: ApprovalDesk) -> list[Any]:
        if team is not None:
            await lab.teams.get(run_id, team)
        return await desk.grants(run_id, team)

    found = _with_desk(run_id, act)
    if as_json:
        _print_json([g.to_dict() for g in found])
        return
    table = Table(title=f"grants in {run_id}")
    for column in ("grant", "team", "tool", "kind", "by", "since"):
        table.add_column(column)
    for grant in found:
        table.add_row(
            grant.id, grant.team_id, grant.tool, grant.kind or "any", grant.created_by,
            grant.created_at,
        )  # fmt: skip
    console.print(table)


@approvals_app.command("revoke")
def revoke(
    run_id: RunArg,
    grant_id: Annotated[str, typer.Argument(metavar="GRANT")],
    by: By = "cli",
) -> None:
    """Revoke a grant: the team's calls of the tool ask again."""

    async def act(_lab: Lab, desk: ApprovalDesk) -> Any:
        return await desk.revoke(grant_id, by, run_id=run_id)

    grant = _with_desk(run_id, act, writes=True)
    console.print(f"{grant.id}: revoked ({grant.tool} of {grant.team_id})")


@approvals_app.command("mode")
def mode(
    run_id: RunArg,
    new_mode: Annotated[
        str | None,
        typer.Argument(metavar="[MODE]", help="read_only, ask or auto; omit to show the modes."),
    ] = None,
    team: Annotated[
        str | None, typer.Option(help="This team only (default: the run's default).")
    ] = None,
    as_json: AsJson = False,
    by: By = "cli",
) -> None:
    """Show the run's approval modes, or set one (a team's, or the run's default)."""

    async def act(lab: Lab, desk: ApprovalDesk) -> dict[str, str]:
        if team is not None:
            await lab.teams.get(run_id, team)
        if new_mode is not None:
            await desk.set_mode(run_id, team, new_mode, by=by)
        default = await desk.mode(run_id)
        shown = {"run default": default.value}
        for t in await lab.teams.list(run_id, include_exited=False):
            shown[t.id] = (await desk.mode(run_id, t.id)).value
        return shown

    shown = _with_desk(run_id, act, writes=new_mode is not None)
    if as_json:
        _print_json(shown)
        return
    table = Table(title=f"approval modes in {run_id}")
    table.add_column("team")
    table.add_column("mode")
    for who, value in shown.items():
        table.add_row(who, value)
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(approvals_app, name="approvals")
