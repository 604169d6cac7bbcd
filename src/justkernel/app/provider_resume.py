"""Resume a paused provider from another process (`justkernel resume-provider RUN PROVIDER`).

A CLI in its own process cannot reach the scheduler that drives the run (that is the CLI's
`justkernel run` or the dashboard's server, maybe on the same database but never in the same
process). So the request is an event, `provider.resume_requested`, in the run's append-only
log, which every driver reads: the run's scheduler answers it on its next dispatch pass
(`Scheduler.answer_resume_requests`: `provider.resumed` naming the request's seq), or, when no
process drives the run, on the first pass after it is next driven. The dashboard's button does
not need this: its server drives the run and calls the scheduler directly.
"""

from __future__ import annotations

from justkernel.core.events.runs import (
    PAUSED_FOR,
    ProviderPaused,
    ProviderResumed,
    ProviderResumeRequested,
)
from justkernel.lab import Lab


class NothingToResume(LookupError):
    """The run is not one that can resume, or nothing in it is paused for the provider."""


async def _log_says_paused(lab: Lab, run_id: str, provider: str) -> bool:
    """The newest `provider.paused` / `provider.resumed` for `provider` is a pause."""
    kinds = [ProviderPaused.KIND, ProviderResumed.KIND]
    before: int | None = None
    while True:
        page = await lab.events.read(run_id, kinds=kinds, before=before, newest_first=True)
        for event in page:
            if event.payload.get("provider") == provider:
                return event.kind == ProviderPaused.KIND
        if not page:
            return False
        before = page[-1].seq


async def paused_teams(lab: Lab, run_id: str, provider: str) -> list[str]:
    """The run's teams paused waiting for `provider`."""
    reason = PAUSED_FOR % provider
    return [
        t.id
        for t in await lab.teams.list(run_id, include_exited=False)
        if t.status == "paused" and (t.status_reason or "").startswith(reason)
    ]


async def request_provider_resume(lab: Lab, run_id: str, provider: str, *, by: str) -> int:
    """Log a resume request for the run's scheduler; returns its seq. Raises `UnknownRun`,
    or `NothingToResume` (nothing logged) for a replay or when `provider` is not paused in
    the run (neither a team waits for it nor does the log show it paused)."""
    run = await lab.runs.get(run_id)
    if run.mode != "live" or run.read_only:
        raise NothingToResume(f"run {run_id} is a {run.mode} run; only live runs resume")
    if not await paused_teams(lab, run_id, provider) and not await _log_says_paused(
        lab, run_id, provider
    ):
        raise NothingToResume(f"provider {provider!r} is not paused in run {run_id}")
    event = await lab.events.append(run_id, ProviderResumeRequested(provider=provider, by=by))
    return event.seq
