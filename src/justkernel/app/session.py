"""One run, driven: create or reopen the run, add its teams, open the judge client and the
Judger beside the scheduler (its `busy` hook keeps the run open while official results are
due), dispatch until the deadline, the teams' end or `stop`, then log `run.summary`.

The CLI (`justkernel run`) and the dashboard (`web.control.RunController`) both drive runs
through this class; they differ only in what they show and in how a missing judge is taken
(`judge_required`): the CLI fails, the dashboard runs on and logs `judger.unavailable`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from justkernel.app.runtime import LabRuntime
from justkernel.app.targets import Announce, run_toolchain
from justkernel.core.events.collab import JudgerUnavailable
from justkernel.core.events.runs import (
    DispatchStarted,
    DispatchStopped,
    RunSummary,
    ToolchainPreparing,
)
from justkernel.core.reasons import Reason, ReasonCode
from justkernel.events.log import READ_PAGE, EventLog
from justkernel.settings.config import ConfigError
from justkernel.store import Run

if TYPE_CHECKING:  # the agent stack takes seconds to import: only a driven run pays for it
    from justkernel.judger.judger import Judger
    from justkernel.scheduler.scheduler import Scheduler, SchedulerConfig
    from justkernel.scheduler.summary import RunFigures

log = logging.getLogger("justkernel.app.session")
STOPPED = ReasonCode.STOPPED  # the reason `Scheduler.run` gives when `stop` was set
NO_WORK = ReasonCode.NO_WORK  # its reason once `busy` (the Judger) said no more, too
DRAIN_POLL_SECONDS = 0.5  # how often a run whose teams stopped asks the Judger if it is done


@dataclass(frozen=True)
class TeamPlan:
    """One team to add when a run starts: its model preset and its team config (members)."""

    model: str
    config: Mapping[str, Any] = field(default_factory=dict)


class RunSession:
    """Drives one run on a `LabRuntime`. Build it with `start` (a new run) or `reopen` (a run
    that exists: resumed, or its teams changed), then `drive` it once."""

    def __init__(self, runtime: LabRuntime, run: Run, scheduler: Scheduler) -> None:
        self.runtime = runtime
        self.run = run
        self.scheduler = scheduler
        self.judger: Judger | None = None
        self.stop = asyncio.Event()
        self._figures: RunFigures | None = None
        self._figures_lock = asyncio.Lock()  # the live view and the summary share one fold

    @property
    def run_id(self) -> str:
        return self.run.id

    @classmethod
    async def start(
        cls,
        runtime: LabRuntime,
        name: str,
        *,
        meta: dict[str, Any],
        config: SchedulerConfig | None,
        teams: Sequence[TeamPlan],
        toolchain: str | None = None,
    ) -> RunSession:
        """Create the run on its target (`toolchain`, else the lab's default
        `JUSTKERNEL_TOOLCHAIN`), recorded in its meta for good, and add its teams."""
        chosen = toolchain or runtime.lab.settings.toolchain
        runtime.target(chosen)  # an unknown id fails before the run exists
        run = await runtime.lab.runs.create(name, meta={**meta, "toolchain": chosen})
        session = cls(runtime, run, runtime.scheduler(run, config))
        for plan in teams:
            await session.scheduler.add_team(plan.model, config=dict(plan.config))
        return session

    @classmethod
    async def reopen(
        cls, runtime: LabRuntime, run_id: str, config: SchedulerConfig | None
    ) -> RunSession:
        """A run that exists, with its teams as stored, on the target it recorded whatever the
        default is now (LookupError when unknown)."""
        run = await runtime.lab.runs.get(run_id)
        return cls(runtime, run, runtime.scheduler(run, config))

    @property
    def toolchain(self) -> str:
        """The run's target."""
        return run_toolchain(self.run.meta)

    def prepare(self, announce: Announce | None = None) -> asyncio.Task[float | None]:
        """Start building the target's shared artefacts beside the run (once per process and
        target); the run's log gets `run.toolchain_preparing` and `announce` the same line
        ("preparing the ascendc-cpu toolchain (one-time build)") for a console."""

        async def told(line: str) -> None:
            if announce is not None:
                announce(line)
            event = ToolchainPreparing(toolchain=self.toolchain, detail=line)
            await self.runtime.lab.events.append(self.run_id, event)

        return self.runtime.targets.prepare(self.toolchain, told)

    async def open_judger(self, *, judge_required: bool) -> Judger | None:
        """The run's Judger, or None when `JUSTKERNEL_JUDGE` is off. When the judge cannot be
        reached, raise if `judge_required`; otherwise log `judger.unavailable` (the run goes
        on without a Judger)."""
        from justkernel.evaluation.connect import JudgeStartError
        from justkernel.evaluation.protocol import JudgeError

        try:
            client = await self.runtime.judge_client()
        except (ConfigError, JudgeStartError, JudgeError, OSError) as exc:
            if judge_required:
                raise
            log.warning("run %s: no Judger: %s", self.run_id, exc)
            await self.runtime.lab.events.append(self.run_id, JudgerUnavailable(detail=str(exc)))
            return None
        self.judger = self.runtime.judger(self.scheduler, client) if client is not None else None
        return self.judger

    async def drive(self, seconds: float | None, *, summarise_stop: bool) -> Reason:
        """Dispatch the teams while the Judger works beside them, until the teams are done,
        the deadline or `stop`; then, unless `stop` was set, the Judger works on until it
        expects no more official results (`_judge_to_the_end`). Returns the scheduler's
        reason. `run.summary` is logged after the Judger has stopped, unless the run was
        stopped and `summarise_stop` is False (a dashboard pause is not the run's end). A
        crashed dispatch raises; a crashed Judger is logged."""
        self.prepare()  # started already when the caller announced it
        judger = self.judger
        judging_stop = asyncio.Event()
        judging = asyncio.create_task(judger.run(judging_stop)) if judger is not None else None
        try:
            busy = judger.busy if judger is not None else None
            reason = await self.scheduler.run(seconds=seconds, stop=self.stop, busy=busy)
            if judger is not None and judging is not None and reason.code not in (STOPPED, NO_WORK):
                await self._judge_to_the_end(judger, judging)
        finally:
            judging_stop.set()
            if judging is not None:
                await self._stopped(judging)
        if reason.code != STOPPED or summarise_stop:
            figures = await self.figures()
            await self.runtime.lab.events.append(
                self.run_id, RunSummary(**reason.fields(), **figures.to_dict())
            )
        return reason

    async def _judge_to_the_end(self, judger: Judger, judging: asyncio.Task[None]) -> None:
        """The teams stopped (time limit, budget, no work left) but the Judger's work does
        not: every accepted candidate and every submission reaches a final state (a result
        collected, a human's decision taken) before the run ends, unless `stop` is set (the
        Stop button stops everything) or today's quota leaves nothing to send."""
        while not self.stop.is_set() and not judging.done():
            try:
                if not await judger.busy():
                    return
            except Exception:  # a store hiccup: ask again on the next beat
                log.exception("run %s: the Judger's state could not be read", self.run_id)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), DRAIN_POLL_SECONDS)

    async def _stopped(self, judging: asyncio.Task[None]) -> None:
        try:
            await judging
        except asyncio.CancelledError:
            raise
        except Exception:  # the teams' results stand; the summary still comes
            log.exception("run %s: the Judger failed", self.run_id)

    async def figures(self) -> RunFigures:
        """The run's figures so far (events folded incrementally, team and experiment fields
        re-read): what the CLI's live table shows and what `run.summary` records."""
        from justkernel.scheduler.summary import RunFigures

        async with self._figures_lock:
            if self._figures is None:
                self._figures = RunFigures(self.run_id)
            await self._figures.catch_up(self.runtime.lab.events)
            await self._figures.refresh(self.scheduler.registry, self.scheduler.experiments)
            return self._figures

    def begin(self, seconds: float | None, *, summarise_stop: bool) -> asyncio.Task[Reason]:
        """`drive` in a task of its own, for a caller that shows progress meanwhile."""
        return asyncio.create_task(self.drive(seconds, summarise_stop=summarise_stop))


async def dispatched_seconds(events: EventLog, run_id: str) -> float:
    """How long the run has dispatched so far: each `run.dispatch_started` to its
    `run.dispatch_stopped`, summed. A Resume gives the run what is left of its time limit
    (a paused run's clock stops with it); a start whose stop a crash never logged counts
    nothing, since when the process died is not in the log."""
    kinds = (DispatchStarted.KIND, DispatchStopped.KIND)
    total, started, after = 0.0, None, 0
    while True:
        page = await events.read(run_id, after=after, kinds=kinds)
        for event in page:
            at = datetime.fromisoformat(event.ts)
            if event.kind == DispatchStarted.KIND:
                started = at
            elif started is not None:
                total += max(0.0, (at - started).total_seconds())
                started = None
        if len(page) < READ_PAGE:
            return total
        after = page[-1].seq


def remaining_seconds(minutes: float | None, used: float) -> float | None:
    """What is left of a time limit of `minutes` after `used` seconds (None: no limit)."""
    return None if not minutes else max(0.0, minutes * 60 - used)
