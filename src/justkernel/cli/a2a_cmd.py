"""`justkernel a2a join | token`: outside agents join a run as teams over A2A.

The token is printed once, on stdout, and only its SHA-256 is stored; nothing here logs it.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from justkernel.cli.common import fail, lab_context, settings_or_exit
from justkernel.settings.config import Settings

a2a_app = typer.Typer(help="Outside agents as teams, over A2A.", no_args_is_help=True)

BaseUrl = Annotated[
    str | None,
    typer.Option(help="The lab server's address as outside agents reach it."),
]


def _print_access(
    settings: Settings, team_id: str, display_name: str, token: str, base: str | None
) -> None:
    from justkernel.a2a.external import team_path

    endpoint = (base or f"http://{settings.host}:{settings.port}").rstrip("/") + team_path(team_id)
    typer.echo(f"team:       {team_id} ({display_name})")
    typer.echo(f"agent card: {endpoint}.well-known/agent-card.json")
    typer.echo(f"endpoint:   {endpoint}")
    typer.echo(f"token:      {token}")
    typer.echo(
        "The token is shown only now. Send it as 'Authorization: Bearer <token>'; "
        "`justkernel a2a token RUN TEAM` issues a new one.",
        err=True,
    )


@a2a_app.command("join")
def join_command(
    run: Annotated[str, typer.Argument(help="The run to join.")],
    name: Annotated[str, typer.Option(help="The team's name, e.g. the agent or model.")],
    sharing: Annotated[
        str, typer.Option(help="Sharing policy: broadcast-best, ring, pull or none.")
    ] = "broadcast-best",
    base_url: BaseUrl = None,
) -> None:
    """Register an outside agent as a new team; print its id, card URL and token (once)."""
    from justkernel.a2a.external import JoinError, join_external

    settings = settings_or_exit()

    async def join() -> tuple[str, str, str]:
        async with lab_context(settings) as lab:
            joined = await join_external(lab, run, name, sharing=sharing)  # type: ignore[arg-type]
            return joined.team.id, joined.team.display_name, joined.token

    try:
        team_id, display_name, token = asyncio.run(join())
    except (JoinError, LookupError, ValueError) as exc:
        fail(str(exc))
    _print_access(settings, team_id, display_name, token, base_url)


@a2a_app.command("token")
def token_command(
    run: Annotated[str, typer.Argument(help="The team's run.")],
    team: Annotated[str, typer.Argument(help="The team id, e.g. team-003.")],
    base_url: BaseUrl = None,
) -> None:
    """Issue a new token for an existing team; its earlier tokens stop working."""
    from justkernel.a2a.external import JoinError, issue_token

    settings = settings_or_exit()

    async def issue() -> tuple[str, str]:
        async with lab_context(settings) as lab:
            token = await issue_token(lab, run, team)
            return (await lab.teams.get(run, team)).display_name, token

    try:
        display_name, token = asyncio.run(issue())
    except (JoinError, LookupError) as exc:
        fail(str(exc))
    _print_access(settings, team, display_name, token, base_url)


def register(app: typer.Typer) -> None:
    app.add_typer(a2a_app, name="a2a")
