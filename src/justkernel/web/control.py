"""Controls the dashboard drives: the run controller (start, pause, resume, add and remove teams)
and the Judger's controls (settings, approve, reject).

`RunController` owns one `LabRuntime` in the server process, opened on first use (the agent
stack is heavy; a server that only shows runs never pays for it), and dispatches runs in
background tasks. Its runtime shares the web lab's event bus, so the dashboard's live stream
gets each event the moment it is committed instead of on the next store poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from justkernel.core.events.collab import JudgerUnavailable
from justkernel.core.events.runs import RunSummary, TeamExited
from justkernel.lab import Lab
from justkernel.settings.config import ConfigError
from justkernel.settings.models import load_model_presets
from justkernel.store import Run
from justkernel.web.forms import Conflict, FormErrors
from justkernel.web.task_settings import TaskSettings

if TYPE_CHECKING:
    from justkernel.runtime import LabRuntime

log = logging.getLogger("justkernel.web.control")
REMOVED_REASON = "removed from the dashboard"


class JudgerControls(Protocol):
    """What the dashboard asks of the Judger (`web.judger_controls.LabJudgerControls`)."""

    def settings(self) -> dict[str, Any]: ...

    def update(self, values: dict[str, Any]) -> dict[str, Any]: ...

    async def approve(self, run_id: str, candidate_id: str, by: str) -> dict[str, Any]: ...

    async def reject(self, run_id: str, candidate_id: str, by: str) -> dict[str, Any]: ...


@dataclass
class _Dispatch:
    run_id: str
    scheduler: Any
    stop: asyncio.Event
    task: asyncio.Task[str]
    judger: Any = None  # the run's Judger, when the lab judges (JUSTKERNEL_JUDGE)


class RunController:
    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self._stack: AsyncExitStack | None = None
        self._runtime: LabRuntime | None = None
        self._slots: int | None = None
        self._dispatch: _Dispatch | None = None
        self._last_error: str | None = None
        self._lock = asyncio.Lock()

    # -- runtime ----------------------------------------------------------------------------
    async def _open_runtime(self, slots: int | None) -> LabRuntime:
        if self._runtime is not None and (slots is None or slots == self._slots):
            return self._runtime
        if self._dispatch is not None:
            return self._runtime  # type: ignore[return-value]  # slots change waits for a pause
        await self._close_runtime()
        from justkernel.runtime import open_runtime  # heavy: only when a run is driven

        stack = AsyncExitStack()
        try:
            runtime = await stack.enter_async_context(open_runtime(self.lab.settings, slots=slots))
        except (ConfigError, OSError, ValueError) as exc:  # hosts.toml, models, a port...
            await stack.aclose()
            raise Conflict(f"the lab cannot run teams: {exc}") from exc
        runtime.lab.events.bus = self.lab.events.bus  # one fan-out for the whole process
        self._stack, self._runtime, self._slots = stack, runtime, slots
        return runtime

    async def _close_runtime(self) -> None:
        if self._stack is not None:
            stack, self._stack, self._runtime = self._stack, None, None
            await stack.aclose()

    async def evaluator(self) -> Any:
        """The lab's evaluator (opening the runtime on first use): A2A submissions go through
        the same pool, cache and receipts as the teams' own."""
        return (await self._open_runtime(None)).evaluator

    def presets(self) -> set[str]:
        return set(load_model_presets(self.lab.settings.models_local_file))

    # -- state ------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        active = self._dispatch
        return {
            "active_run": active.run_id if active else None,
            "state": "running" if active else "idle",
            "last_error": self._last_error,
        }

    def _config(self, task: TaskSettings) -> Any:
        from justkernel.scheduler.scheduler import SchedulerConfig

        return SchedulerConfig(model_calls=task.model_calls, members=task.members)

    @staticmethod
    def _task_of(run: Run) -> TaskSettings:
        stored = run.meta.get("task")
        try:
            return TaskSettings.model_validate(stored) if stored else TaskSettings()
        except ValueError:
            return TaskSettings()

    # -- actions ----------------------------------------------------------------------------
    async def start(self, task: TaskSettings) -> Run:
        async with self._lock:
            if self._dispatch is not None:
                raise Conflict(f"run {self._dispatch.run_id} is running; pause it first")
            runtime = await self._open_runtime(task.slots)
            presets = runtime.presets
            offline = all(presets[t.model].provider == "offline" for t in task.teams)
            run = await self.lab.runs.create(
                task.name,
                meta={
                    "model": task.teams[0].model,
                    "teams": len(task.teams),
                    "mode": "multi-team" if task.mode == "multi" else "single main team",
                    "offline": offline,
                    "started_from": "dashboard",
                    "task": task.model_dump(mode="json"),
                },
            )
            scheduler = runtime.scheduler(run.id, self._config(task))
            for plan in task.teams:
                await scheduler.add_team(plan.model, config=_team_config(plan.members))
            await self._begin(runtime, run.id, scheduler, task)
            return run

    async def _judger(self, runtime: LabRuntime, run_id: str, scheduler: Any) -> Any:
        """The run's Judger, or None when judging is off or the judge cannot be reached (the
        run goes on without it, and a `judger.unavailable` event says why)."""
        from justkernel.evaluation.connect import JudgeStartError
        from justkernel.evaluation.protocol import JudgeError

        try:
            client = await runtime.judge_client()
        except (ConfigError, JudgeStartError, JudgeError, OSError) as exc:
            log.warning("run %s: no Judger: %s", run_id, exc)
            await self.lab.events.append(run_id, JudgerUnavailable(detail=str(exc)))
            return None
        return runtime.judger(scheduler, client) if client is not None else None

    async def _begin(
        self, runtime: LabRuntime, run_id: str, scheduler: Any, task: TaskSettings
    ) -> None:
        stop = asyncio.Event()
        seconds = task.minutes * 60 if task.minutes else None
        judger = await self._judger(runtime, run_id, scheduler)
        coro = self._drive(run_id, scheduler, judger, seconds, stop)
        self._dispatch = _Dispatch(run_id, scheduler, stop, asyncio.create_task(coro), judger)
        self._last_error = None

    async def _drive(
        self, run_id: str, scheduler: Any, judger: Any, seconds: float | None, stop: Any
    ) -> str:
        """Dispatch the teams while the Judger works beside them; the run ends when the teams
        are done and the Judger expects no more official results (or at the deadline)."""
        reason = "failed"
        judging_stop = asyncio.Event()
        judging = asyncio.create_task(judger.run(judging_stop)) if judger is not None else None
        try:
            busy = judger.busy if judger is not None else None
            reason = await scheduler.run(seconds=seconds, stop=stop, busy=busy)
            if reason != "stopped":
                await self._summarise(run_id, scheduler, reason)
        except Exception as exc:  # a crashed dispatch is reported, never silently lost
            log.exception("run %s: dispatch failed", run_id)
            self._last_error = f"run {run_id}: {type(exc).__name__}: {exc}"
        finally:
            judging_stop.set()
            if judging is not None:
                with contextlib.suppress(Exception):
                    await judging
            if self._dispatch is not None and self._dispatch.run_id == run_id:
                self._dispatch = None
        return reason

    async def _summarise(self, run_id: str, scheduler: Any, reason: str) -> None:
        from justkernel.scheduler.summary import RunFigures

        figures = RunFigures(run_id)
        await figures.catch_up(self.lab.events)
        await figures.refresh(scheduler.registry, scheduler.experiments)
        await self.lab.events.append(run_id, RunSummary(reason=reason, **figures.to_dict()))

    async def pause(self, run_id: str) -> None:
        """Stop dispatching; teams mid-turn are interrupted and resume from their checkpoint."""
        async with self._lock:
            active = self._dispatch
            if active is None or active.run_id != run_id:
                raise Conflict(f"run {run_id} is not running")
            active.stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await active.task

    async def resume(self, run_id: str) -> None:
        async with self._lock:
            if self._dispatch is not None:
                raise Conflict(f"run {self._dispatch.run_id} is running; pause it first")
            run = await self.lab.runs.get(run_id)
            if run.mode != "live" or run.read_only:
                raise Conflict(f"run {run_id} is a {run.mode} run; only live runs resume")
            task = self._task_of(run)
            runtime = await self._open_runtime(task.slots)
            scheduler = runtime.scheduler(run.id, self._config(task))
            await self._begin(runtime, run.id, scheduler, task.model_copy(update={"minutes": None}))

    async def _scheduler(self, run_id: str) -> Any:
        if self._dispatch is not None and self._dispatch.run_id == run_id:
            return self._dispatch.scheduler
        run = await self.lab.runs.get(run_id)
        if run.mode != "live" or run.read_only:
            raise Conflict(f"run {run_id} is a {run.mode} run; its teams cannot change")
        task = self._task_of(run)
        runtime = await self._open_runtime(task.slots)
        return runtime.scheduler(run.id, self._config(task))

    async def add_team(self, run_id: str, model: str, members: dict[str, str]) -> dict[str, Any]:
        async with self._lock:
            scheduler = await self._scheduler(run_id)
            known = set(scheduler.presets)
            errors = {"model": f"unknown model preset {model!r}"} if model not in known else {}
            for role, name in members.items():
                if name not in known:
                    errors[f"members.{role}"] = f"unknown model preset {name!r}"
            if errors:
                raise FormErrors(errors)
            try:
                team = await scheduler.add_team(model, config=_team_config(members))
            except ValueError as exc:  # the 100-team limit
                raise FormErrors({"model": str(exc)}) from None
            return team.to_dict()

    async def remove_team(self, run_id: str, team_id: str) -> None:
        """The team leaves the live view; its workspace and history stay."""
        async with self._lock:
            scheduler = await self._scheduler(run_id)
            team = await scheduler.registry.get(run_id, team_id)
            if team.status == "exited":
                raise Conflict(f"team {team_id} has already exited")
            running = getattr(scheduler, "_running", {}).get(team_id)
            if running is not None:  # interrupt its turn first, or its end would un-exit it
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
            await scheduler.registry.set_status(run_id, team_id, "exited", REMOVED_REASON)
            await self.lab.events.append(run_id, TeamExited(reason=REMOVED_REASON), team=team_id)

    async def close(self) -> None:
        active = self._dispatch
        if active is not None:
            active.stop.set()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await active.task
        await self._close_runtime()


def _team_config(members: dict[str, str]) -> dict[str, Any]:
    return {"member_models": dict(members)} if members else {}
