"""Controls the dashboard drives: the run controller (start, pause, resume, add and remove teams,
resume a paused provider) and the Judger's controls (settings, approve, reject).

`RunController` is the dashboard's adapter over `app.RunSession`: it owns one `LabRuntime` in
the server process, opened on first use (the agent stack is heavy; a server that only shows
runs never pays for it) on the server's own `Lab` (one database engine, one event bus: the
dashboard's live stream gets each event the moment it is committed), and drives at most one
run at a time in a background task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Protocol

from justkernel.a2a.board import LabBoard
from justkernel.agents.approval_desk import ApprovalDesk
from justkernel.core.approvals import DEFAULT_MODE
from justkernel.core.events.runs import TeamExited
from justkernel.core.reasons import Reason, ReasonCode
from justkernel.lab import Lab
from justkernel.settings.config import ConfigError
from justkernel.settings.models import load_model_presets
from justkernel.store import Run
from justkernel.web.forms import Conflict, FormErrors
from justkernel.web.task_settings import TaskSettings, preset_errors

if TYPE_CHECKING:  # the agent stack takes seconds to import: only a driven run pays for it
    from justkernel.app import LabRuntime, RunSession
    from justkernel.scheduler.scheduler import Scheduler, SchedulerConfig
    from justkernel.workers.evaluator import Evaluator

log = logging.getLogger("justkernel.web.control")
REMOVED_REASON = Reason.of(ReasonCode.REMOVED)
HUMAN = "dashboard"  # who asked, in a resume request


class JudgerControls(Protocol):
    """What the dashboard asks of the Judger (`web.judger_controls.LabJudgerControls`)."""

    def settings(self) -> dict[str, Any]: ...

    def update(self, values: dict[str, Any]) -> dict[str, Any]: ...

    async def approve(self, run_id: str, candidate_id: str, by: str) -> dict[str, Any]: ...

    async def reject(self, run_id: str, candidate_id: str, by: str) -> dict[str, Any]: ...


class RunController:
    def __init__(self, lab: Lab, board: LabBoard) -> None:
        """`board` is the server's one board (`app.lab_board`), shared with its A2A endpoint:
        every run this controller drives posts through it."""
        self.lab = lab
        self.board = board
        self._stack: AsyncExitStack | None = None
        self._runtime: LabRuntime | None = None
        self._slots: int | None = None
        self._session: RunSession | None = None  # the run being driven
        self._task: asyncio.Task[str] | None = None  # `_drive` of that run
        self._last_error: str | None = None
        self._lock = asyncio.Lock()

    # -- runtime ----------------------------------------------------------------------------
    async def _open_runtime(self, slots: int | None) -> LabRuntime:
        if self._runtime is not None and (slots is None or slots == self._slots):
            return self._runtime
        if self._session is not None and self._runtime is not None:
            return self._runtime  # a slots change waits for a pause
        await self._close_runtime()
        from justkernel.app import open_runtime  # heavy: only when a run is driven

        stack = AsyncExitStack()
        try:
            runtime = await stack.enter_async_context(
                open_runtime(self.lab.settings, slots=slots, lab=self.lab, board=self.board)
            )
        except (ConfigError, OSError, ValueError) as exc:  # hosts.toml, models, a port...
            await stack.aclose()
            raise Conflict(f"the lab cannot run teams: {exc}") from exc
        self._stack, self._runtime, self._slots = stack, runtime, slots
        return runtime

    async def _close_runtime(self) -> None:
        if self._stack is not None:
            stack, self._stack, self._runtime = self._stack, None, None
            await stack.aclose()

    async def _fresh_runtime(self, slots: int | None) -> LabRuntime:
        """The runtime, its presets re-read from the files: the runtime outlives the
        dashboard's saves and deletes, and must not act on the presets it opened with."""
        runtime = await self._open_runtime(slots)
        try:
            runtime.reload_presets()
        except ConfigError as exc:
            raise Conflict(f"the model presets cannot be read: {exc}") from exc
        return runtime

    async def evaluator(self, toolchain: str | None = None) -> Evaluator:
        """The evaluator of `toolchain` (default: the lab's default target), opening the
        runtime on first use: A2A submissions go through the same pool, cache and receipts as
        the teams' own, on their run's target."""
        runtime = await self._open_runtime(None)
        return runtime.target(toolchain).evaluator if toolchain else runtime.evaluator

    def presets(self) -> set[str]:
        return set(load_model_presets(self.lab.settings.models_local_file))

    # -- state ------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        active = self._session
        return {
            "active_run": active.run_id if active else None,
            "state": "running" if active else "idle",
            "last_error": self._last_error,
        }

    def _config(self, task: TaskSettings) -> SchedulerConfig:
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
        from justkernel.app import RunSession, TeamPlan

        async with self._lock:
            if self._session is not None:
                raise Conflict(f"run {self._session.run_id} is running; pause it first")
            runtime = await self._fresh_runtime(task.slots)
            presets = runtime.presets
            unknown = preset_errors(task, presets.keys())  # deleted since the form was sent
            if unknown:
                raise FormErrors(unknown)
            offline = all(presets[t.model].provider == "offline" for t in task.teams)
            meta = {
                "model": task.teams[0].model,
                "teams": len(task.teams),
                "mode": "multi-team" if task.mode == "multi" else "single main team",
                "offline": offline,
                "started_from": "dashboard",
                "task": task.model_dump(mode="json"),
            }
            plans = [TeamPlan(p.model, _team_config(p.members)) for p in task.teams]
            session = await RunSession.start(
                runtime,
                task.name,
                meta=meta,
                config=self._config(task),
                teams=plans,
                toolchain=task.toolchain,
            )
            if task.approval_mode != DEFAULT_MODE:  # set before the first turn can act
                desk = ApprovalDesk.of(runtime.lab)
                await desk.set_mode(session.run_id, None, task.approval_mode, by="dashboard")
            await self._begin(session, task.minutes * 60 if task.minutes else None)
            return session.run

    async def _begin(self, session: RunSession, seconds: float | None) -> None:
        """Drive the run in the background for `seconds` (None: no limit), its Judger beside
        it when the lab judges (a judge that cannot be reached is logged as
        `judger.unavailable`; the run goes on)."""
        await session.open_judger(judge_required=False)
        self._session, self._last_error = session, None
        self._task = asyncio.create_task(self._drive(session, seconds))

    async def _drive(self, session: RunSession, seconds: float | None) -> Reason:
        """A pause is not the run's end (no summary then); a crashed dispatch is reported in
        `status`, never silently lost."""
        reason = Reason.of(ReasonCode.FAILED)
        try:
            reason = await session.drive(seconds, summarise_stop=False)
        except Exception as exc:
            log.exception("run %s: dispatch failed", session.run_id)
            self._last_error = f"run {session.run_id}: {type(exc).__name__}: {exc}"
        finally:
            if self._session is session:
                self._session, self._task = None, None
        return reason

    async def pause(self, run_id: str) -> None:
        """Stop dispatching; teams mid-turn are interrupted and resume from their checkpoint."""
        async with self._lock:
            active = self._session
            if active is None or active.run_id != run_id:
                raise Conflict(f"run {run_id} is not running")
            await self._halt(active)

    async def _halt(self, active: RunSession) -> None:
        task = self._task
        active.stop.set()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def resume(self, run_id: str) -> None:
        from justkernel.app import RunSession
        from justkernel.app.session import dispatched_seconds, remaining_seconds

        async with self._lock:
            if self._session is not None:
                raise Conflict(f"run {self._session.run_id} is running; pause it first")
            run = await self.lab.runs.get(run_id)
            if run.mode != "live" or run.read_only:
                raise Conflict(f"run {run_id} is a {run.mode} run; only live runs resume")
            task = self._task_of(run)
            runtime = await self._fresh_runtime(task.slots)
            session = await RunSession.reopen(runtime, run.id, self._config(task))
            # what is left of the run's time limit (none left: the Judger finishes its work)
            used = await dispatched_seconds(self.lab.events, run.id)
            await self._begin(session, remaining_seconds(task.minutes, used))

    async def _scheduler(self, run_id: str) -> Scheduler:
        """The run's scheduler, on presets re-read from the files (the driven run's scheduler
        shares the runtime's preset dict, so it sees them too)."""
        if self._session is not None and self._session.run_id == run_id:
            await self._fresh_runtime(None)
            return self._session.scheduler
        run = await self.lab.runs.get(run_id)
        if run.mode != "live" or run.read_only:
            raise Conflict(f"run {run_id} is a {run.mode} run; its teams cannot change")
        task = self._task_of(run)
        runtime = await self._fresh_runtime(task.slots)
        return runtime.scheduler(run, self._config(task))

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
            await scheduler.interrupt_turn(team_id)  # first, or the turn's end would un-exit it
            await scheduler.registry.set_status(run_id, team_id, "exited", REMOVED_REASON.text())
            exited = TeamExited(**REMOVED_REASON.fields())
            await self.lab.events.append(run_id, exited, team=team_id)

    async def resume_provider(self, run_id: str, provider: str) -> list[str]:
        """After a person fixed the provider's key or balance: dispatch to it starts again and
        the teams paused for it are idle (on the driven run's own scheduler, so its next pass
        dispatches them; on a run not driven, they take turns when it is resumed). Returns
        the resumed teams; Conflict when nothing in the run is paused for the provider."""
        from justkernel.app.provider_resume import (
            NothingToResume,
            is_driven,
            request_provider_resume,
        )
        from justkernel.scheduler.scheduler import ProviderNotPaused

        async with self._lock:
            driven_here = self._session is not None and self._session.run_id == run_id
            if not driven_here and await is_driven(self.lab, run_id):
                # another process (a CLI run) drives it: only its scheduler can lift its pause
                try:
                    await request_provider_resume(self.lab, run_id, provider, by=HUMAN)
                except NothingToResume as exc:
                    raise Conflict(str(exc)) from None
                return []
            scheduler = await self._scheduler(run_id)
            try:
                return await scheduler.resume_provider(provider)
            except ProviderNotPaused as exc:
                raise Conflict(str(exc)) from None

    async def close(self) -> None:
        active = self._session
        if active is not None:
            with contextlib.suppress(Exception):
                await self._halt(active)
        await self._close_runtime()


def _team_config(members: dict[str, str]) -> dict[str, Any]:
    return {"member_models": dict(members)} if members else {}
