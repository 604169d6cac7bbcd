"""Resume a paused connection from another process (`justkernel resume-provider RUN CONNECTION`).

A connection is a model preset (its base URL and key): pauses are keyed by it, so the preset's
name is what `provider.paused` names (`connection`) and what a person resumes.

A CLI in its own process cannot reach the scheduler that drives the run (that is the CLI's
`justkernel run` or the dashboard's server, maybe on the same database but never in the same
process). While the run is driven (its newest dispatch event is `run.dispatch_started`), the
request is an event, `provider.resume_requested`, in the run's append-only log, which the run's
scheduler answers on its next dispatch pass (`Scheduler.answer_resume_requests`:
`provider.resumed` naming the request's seq). When nothing drives the run, nothing holds the
pause but the store: the teams paused for the connection are set idle here, with
`provider.resumed` and `team.resumed` logged, so the next `run --resume` dispatches them. (A
driver that crashed leaves `run.dispatch_started` last: the request waits for the next driver,
which answers it on its first pass.) The dashboard's button does not need this: its server
drives the run and calls the scheduler directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from justkernel.core.events.runs import (
    DispatchStarted,
    DispatchStopped,
    ProviderPaused,
    ProviderResumed,
    ProviderResumeRequested,
    TeamResumed,
)
from justkernel.core.reasons import waits_for
from justkernel.lab import Lab
from justkernel.store.teams import Team


class NothingToResume(LookupError):
    """The run is not one that can resume, or nothing in it is paused for the connection."""


@dataclass(frozen=True)
class ResumeOutcome:
    """What a resume did: `request_seq` when a driving scheduler was asked, else the teams
    set idle in the store."""

    request_seq: int | None
    teams: list[str]


async def _newest(lab: Lab, run_id: str, kinds: list[str], connection: str | None) -> str | None:
    """The kind of the newest event of `kinds` (for `connection`, when given), or None."""
    before: int | None = None
    while True:
        page = await lab.events.read(run_id, kinds=kinds, before=before, newest_first=True)
        for event in page:
            named = event.payload.get("connection") or event.payload.get("provider")
            if connection is None or named == connection:
                return event.kind
        if not page:
            return None
        before = page[-1].seq


async def _log_says_paused(lab: Lab, run_id: str, connection: str) -> bool:
    """The newest `provider.paused` / `provider.resumed` for `connection` is a pause."""
    kinds = [ProviderPaused.KIND, ProviderResumed.KIND]
    return await _newest(lab, run_id, kinds, connection) == ProviderPaused.KIND


async def is_driven(lab: Lab, run_id: str) -> bool:
    """A scheduler drives the run now (or crashed while it did): its newest dispatch event is
    `run.dispatch_started`."""
    kinds = [DispatchStarted.KIND, DispatchStopped.KIND]
    return await _newest(lab, run_id, kinds, None) == DispatchStarted.KIND


def paused_for(team: Team, connection: str) -> bool:
    """The team waits for `connection` (its status reason is a provider pause for it)."""
    return team.status == "paused" and waits_for(team.status_reason) == connection


async def paused_teams(lab: Lab, run_id: str, connection: str) -> list[str]:
    """The run's teams paused waiting for `connection`."""
    teams = await lab.teams.list(run_id, include_exited=False)
    return [t.id for t in teams if paused_for(t, connection)]


async def paused_connections(lab: Lab, run_id: str) -> dict[str, list[str]]:
    """Connection -> the run's teams paused waiting for it."""
    out: dict[str, list[str]] = {}
    for team in await lab.teams.list(run_id, include_exited=False):
        connection = waits_for(team.status_reason)
        if team.status == "paused" and connection is not None:
            out.setdefault(connection, []).append(team.id)
    return out


async def request_provider_resume(lab: Lab, run_id: str, provider: str, *, by: str) -> int:
    """Log a resume request for the run's scheduler; returns its seq. `provider` is the
    connection (a preset's name). Raises `UnknownRun`, or `NothingToResume` (nothing logged)
    for a replay or when it is not paused in the run."""
    await check_resumable(lab, run_id, provider)
    event = await lab.events.append(
        run_id, ProviderResumeRequested(provider=provider, connection=provider, by=by)
    )
    return event.seq


async def check_resumable(lab: Lab, run_id: str, connection: str) -> list[str]:
    """The teams paused for `connection`; `NothingToResume` when the run cannot resume it."""
    run = await lab.runs.get(run_id)
    if run.mode != "live" or run.read_only:
        raise NothingToResume(f"run {run_id} is a {run.mode} run; only live runs resume")
    teams = await paused_teams(lab, run_id, connection)
    if not teams and not await _log_says_paused(lab, run_id, connection):
        raise NothingToResume(f"provider {connection!r} is not paused in run {run_id}")
    return teams


async def resume_connection(lab: Lab, run_id: str, connection: str, *, by: str) -> ResumeOutcome:
    """Resume `connection` in the run whether or not a scheduler drives it: ask the driving
    one (a request event), or, with none, set the teams paused for it idle in the store."""
    if await is_driven(lab, run_id):
        return ResumeOutcome(await request_provider_resume(lab, run_id, connection, by=by), [])
    teams = await check_resumable(lab, run_id, connection)
    await lab.events.append(
        run_id, ProviderResumed(provider=connection, connection=connection, teams=teams)
    )
    for team_id in teams:
        await lab.teams.set_status(run_id, team_id, "idle", None)
        await lab.events.append(run_id, TeamResumed(), team=team_id)
    return ResumeOutcome(None, teams)
