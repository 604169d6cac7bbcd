"""`justkernel run`: a headless lab run with live progress and a summary table at the end."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import signal
from typing import TYPE_CHECKING, Annotated

import typer
from rich.live import Live
from rich.table import Table

from justkernel.cli.common import console, fail, settings_or_exit
from justkernel.core.approvals import ApprovalMode
from justkernel.core.targets import TOOLCHAIN_IDS
from justkernel.evaluation.connect import JudgeStartError
from justkernel.evaluation.protocol import JudgeError
from justkernel.settings.config import ConfigError, Settings

Target = enum.Enum("Target", {t: t for t in TOOLCHAIN_IDS}, type=str)  # typer's choices
Mode = enum.Enum("Mode", {m.value: m.value for m in ApprovalMode}, type=str)

if TYPE_CHECKING:  # the agent stack takes seconds to import: only `run` pays for it
    from justkernel.lab import Lab
    from justkernel.scheduler.scheduler import SchedulerConfig
    from justkernel.scheduler.summary import RunFigures


def _cycles(value: int | None) -> str:
    return f"{value:,}" if value is not None else "—"


def figures_table(figures: RunFigures, title: str) -> Table:
    table = Table(title=title, caption=figures.judger.line())
    for column in ("team", "status", "best est. cycles", "experiments", "model calls", "tokens"):
        table.add_column(column)
    table.add_column("cost (USD)")
    for team in sorted(figures.teams.values(), key=lambda t: t.team_id):
        status = team.status + (f" ({team.status_reason})" if team.status_reason else "")
        tokens = f"{team.tokens:,}" + (" (est.)" if team.tokens_estimated else "")
        cost = f"{team.cost_usd:.4f}" if team.cost_usd is not None else "unpriced"
        table.add_row(
            team.display_name or team.team_id,
            status,
            _cycles(team.best_cycles),
            str(team.experiments),
            str(team.model_calls),
            tokens,
            cost,
        )
    return table


def run_command(
    teams: Annotated[int, typer.Option(min=1, max=100, help="Teams (1 = one main team).")] = 1,
    model: Annotated[str, typer.Option(help="Model preset from models.toml.")] = "offline",
    minutes: Annotated[float, typer.Option(min=0.05, help="Stop dispatching after this.")] = 10.0,
    resume: Annotated[str | None, typer.Option(help="Continue this run id.")] = None,
    name: Annotated[str, typer.Option(help="Run name.")] = "headless run",
    slots: Annotated[int | None, typer.Option(min=1, max=8, help="Worker slots.")] = None,
    model_calls: Annotated[int, typer.Option(min=1, help="Concurrent model calls.")] = 4,
    members: Annotated[bool, typer.Option(help="Teams of analyst/developer/reviewer.")] = False,
    run_cost_cap: Annotated[float | None, typer.Option(help="Run cost cap in USD.")] = None,
    team_token_cap: Annotated[int | None, typer.Option(help="Token cap per team.")] = None,
    judger: Annotated[
        bool, typer.Option(help="Run the Judger (JUSTKERNEL_JUDGE picks the judge).")
    ] = True,
    toolchain: Annotated[
        Target | None,
        typer.Option(
            help="The run's target (default JUSTKERNEL_TOOLCHAIN, else ascendc-cpu); "
            "a resumed run keeps its own.",
            case_sensitive=False,
        ),
    ] = None,
    approval_mode: Annotated[
        Mode | None,
        typer.Option(
            help="Supervise the run's teams: read_only or ask stop chosen tool calls for a "
            "person (`justkernel approvals`); auto never asks. Default: the run's own (auto).",
            case_sensitive=False,
        ),
    ] = None,
) -> None:
    """Run teams headless; every step is an event in the log."""
    from justkernel.governance.budget import BudgetCaps
    from justkernel.scheduler.scheduler import SchedulerConfig

    settings = settings_or_exit()
    config = SchedulerConfig(
        model_calls=model_calls,
        members=members,
        caps=BudgetCaps(team_tokens=team_token_cap, run_cost_usd=run_cost_cap),
    )
    try:
        asyncio.run(
            _run(
                settings,
                teams,
                model,
                minutes,
                resume,
                name,
                slots,
                config,
                judger=judger,
                toolchain=toolchain.value if toolchain is not None else None,
                approval_mode=approval_mode.value if approval_mode is not None else None,
            )
        )
    except (ConfigError, ValueError, LookupError, JudgeError, JudgeStartError) as exc:
        fail(str(exc))


async def _run(
    settings: Settings,
    teams: int,
    model: str,
    minutes: float,
    resume: str | None,
    name: str,
    slots: int | None,
    config: SchedulerConfig,
    *,
    judger: bool = True,
    toolchain: str | None = None,
    approval_mode: str | None = None,
) -> None:
    """An adapter over `app.RunSession`: signals set its stop, a live table shows its figures."""
    from justkernel.app import RunSession, TeamPlan, open_runtime

    async with open_runtime(settings, slots=slots) as runtime:
        if resume:
            session = await RunSession.reopen(runtime, resume, config)
            if toolchain is not None and toolchain != session.toolchain:
                raise ValueError(
                    f"run {resume} is a {session.toolchain} run; a run keeps its target "
                    f"(--toolchain {toolchain} cannot change it)"
                )
        else:
            presets = runtime.presets
            if model not in presets:
                raise ValueError(f"unknown model preset {model!r}: {', '.join(sorted(presets))}")
            meta = {
                "model": model,
                "teams": teams,
                "mode": "multi-team" if teams > 1 else "single main team",
                "offline": presets[model].provider == "offline",
            }
            plans = [TeamPlan(model)] * teams
            session = await RunSession.start(
                runtime, name, meta=meta, config=config, teams=plans, toolchain=toolchain
            )
        run_id = session.run_id
        if approval_mode is not None:
            await _apply_mode(runtime.lab, run_id, approval_mode)
        console.print(
            f"run [bold]{run_id}[/] — {teams} team(s), model {model}, target {session.toolchain}"
        )
        if resume:
            await _say_paused(runtime.lab, run_id)
        session.prepare(lambda line: console.print(line, highlight=False))
        judge = await session.open_judger(judge_required=True) if judger else None
        if judge is not None:
            backend = judge.client.backend
            console.print(f"Judger: {backend} judge, settings in {judge.settings_file.path}")
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, session.stop.set)
        dispatch = session.begin(minutes * 60, summarise_stop=True)
        with Live(console=console, refresh_per_second=2) as live:
            while not dispatch.done():
                live.update(figures_table(await session.figures(), f"{run_id} (running)"))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(dispatch), 1.0)
        reason = dispatch.result().text()
        console.print(figures_table(await session.figures(), f"{run_id}: {reason}"))
        await _say_waiting(runtime.lab, run_id)
        if stuck := await _all_paused(runtime.lab, run_id):
            for line in stuck:
                console.print(line, highlight=False, soft_wrap=True)
            raise typer.Exit(1)


async def _apply_mode(lab: Lab, run_id: str, mode: str) -> None:
    """`--approval-mode`: the run's default and every team's own mode (a team the dashboard
    set apart follows the flag too: it says how the whole run is supervised)."""
    from justkernel.agents.approval_desk import ApprovalDesk

    desk = ApprovalDesk.of(lab)
    await desk.set_mode(run_id, None, mode, by="cli")
    own = await desk.modes(run_id)
    for team in await lab.teams.list(run_id, include_exited=False):
        if team.id in own and own[team.id] != mode:
            await desk.set_mode(run_id, team.id, mode, by="cli")
    console.print(f"approval mode {mode} for the teams of {run_id}")


async def _say_waiting(lab: Lab, run_id: str) -> None:
    """Cards still waiting when the run stops: they wait in the store for `--resume`."""
    from justkernel.agents.approval_desk import ApprovalDesk

    waiting = await ApprovalDesk.of(lab).pending(run_id)
    if waiting:
        console.print(
            f"{len(waiting)} tool call(s) wait for approval: `justkernel approvals list {run_id}`, "
            f"then `justkernel run --resume {run_id}`",
            highlight=False,
            soft_wrap=True,
        )


async def _all_paused(lab: Lab, run_id: str) -> list[str]:
    """When every team of the run is paused: why, and how to resume each (else nothing). A
    run that ends so has not finished its work, so `run` says it and exits non-zero."""
    from justkernel.app.provider_resume import paused_connections

    teams = await lab.teams.list(run_id, include_exited=False)
    if not teams or any(t.status != "paused" for t in teams):
        return []
    lines = [f"every team of run {run_id} is paused; nothing more will run until one resumes"]
    connections = await paused_connections(lab, run_id)
    for connection, waiting in connections.items():
        lines.append(
            f"  connection {connection} ({', '.join(waiting)}): fix its key or balance, then "
            f"`justkernel resume-provider {run_id} {connection}` and `justkernel run --resume "
            f"{run_id}`"
        )
    lines += [
        f"  {t.display_name or t.id}: {t.status_reason or 'paused'}"
        for t in teams
        if not any(t.id in waiting for waiting in connections.values())
    ]
    return lines


async def _say_paused(lab: Lab, run_id: str) -> None:
    """A resumed run's teams that wait for a connection: they take no turn until it resumes."""
    from justkernel.app.provider_resume import paused_connections

    for connection, waiting in (await paused_connections(lab, run_id)).items():
        console.print(
            f"{', '.join(waiting)} paused for connection {connection}: they take no turn until "
            f"`justkernel resume-provider {run_id} {connection}` (after fixing its key)",
            highlight=False,
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
