"""The working lab: the services of `Lab` plus the evaluator, the worker pool, the model
presets and the agents' checkpointer, opened and closed together. The pool comes from
`hosts.toml` (`workers.pool_config`): local slots, SSH hosts, a Dask cluster. The judge client
(and the local judge process behind it) opens on first use: a lab that only evaluates never
starts a judge.

A process opens one database engine: the web server passes its own `Lab` in (`lab=`), and the
runtime then neither opens a second one nor closes it. Likewise one lab board (`lab_board`):
the scheduler's teams and the A2A executor's outside teams post through the same instance,
so they share its per-sender rate window; the server builds it once and passes it (`board=`).

Targets (`app.targets`): one toolchain per id, built lazily through the registry's cache and
shared by that target's evaluator and the pool's local executor. A run's scheduler and Judger
work on the target the run recorded (`meta["toolchain"]`); `operator` and `evaluator` here are
the default target's (`JUSTKERNEL_TOOLCHAIN`), for callers without a run (A2A's default)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from justkernel.a2a.board import LabBoard
from justkernel.app.targets import RuntimeTargets, Target, run_toolchain
from justkernel.evaluation.connect import connect_judge
from justkernel.evaluation.protocol import EvaluationClient
from justkernel.judger.settings import JudgerSettingsFile
from justkernel.lab import Lab, open_lab
from justkernel.operators import OperatorDefinition, load_operator
from justkernel.settings.config import Settings
from justkernel.settings.models import ModelPreset, load_model_presets
from justkernel.store import Run
from justkernel.toolchains.registry import Toolchains
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.pool import WorkerPool
from justkernel.workers.pool_config import build_pool, default_slots

if TYPE_CHECKING:  # the agent stack takes seconds to import: only a driven run pays for it
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from justkernel.judger.judger import Judger
    from justkernel.scheduler.scheduler import Scheduler, SchedulerConfig


@dataclass
class LabRuntime:
    lab: Lab
    operator: OperatorDefinition
    pool: WorkerPool
    evaluator: Evaluator
    presets: dict[str, ModelPreset]
    checkpointer: BaseCheckpointSaver[str]
    board: LabBoard
    targets: RuntimeTargets
    resources: AsyncExitStack = field(default_factory=AsyncExitStack)
    _judge: tuple[EvaluationClient | None] | None = None
    _judge_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def judger_settings(self) -> JudgerSettingsFile:
        return JudgerSettingsFile(self.lab.settings.resolved_data_dir)

    def reload_presets(self) -> dict[str, ModelPreset]:
        """Re-read the preset files into the one dict every scheduler and Judger of this
        runtime holds (in place: a preset saved in the dashboard is usable at once, by the run
        being driven too, and a deleted one is refused; issue #16). Raises ConfigError."""
        fresh = load_model_presets(self.lab.settings.models_local_file)
        self.presets.clear()
        self.presets.update(fresh)
        return self.presets

    def target(self, toolchain_id: str) -> Target:
        """The toolchain, operator view and evaluator of `toolchain_id` (built on first use)."""
        return self.targets.get(toolchain_id)

    def scheduler(self, run: Run | str, config: SchedulerConfig | None = None) -> Scheduler:
        """The scheduler of `run` on the target its meta records (`cpu` for a run from before
        targets); given only an id, on the lab's default target."""
        from justkernel.scheduler.scheduler import Scheduler

        if isinstance(run, Run):
            run_id, toolchain_id = run.id, run_toolchain(run.meta)
        else:
            run_id, toolchain_id = run, self.lab.settings.toolchain
        target = self.target(toolchain_id)
        settings = self.judger_settings
        return Scheduler(
            self.lab,
            run_id,
            target.operator,
            target.evaluator,
            self.presets,
            self.checkpointer,
            config,
            board=self.board,
            freeze_unverified=lambda: settings.current().freezes_unverified,
            toolchain_id=target.toolchain_id,
        )

    async def judge_client(self) -> EvaluationClient | None:
        """The Judger's client per `JUSTKERNEL_JUDGE` (None when off), opened once; a local
        judge started for it stops when the runtime closes."""
        async with self._judge_lock:
            if self._judge is None:
                client = await self.resources.enter_async_context(
                    connect_judge(self.lab.settings, self.lab.secrets)
                )
                self._judge = (client,)
            return self._judge[0]

    def judger(self, scheduler: Scheduler, client: EvaluationClient) -> Judger:
        """The run's Judger, on the scheduler's board, candidates and operator view (the run's
        target: its review rebuilds and re-hashes that project), reading the shared settings
        file before every pass."""
        from justkernel.judger.session import build_judger

        return build_judger(
            self.lab, scheduler.operator, self.presets, self.judger_settings, scheduler, client
        )


__all__ = ["LabRuntime", "default_slots", "lab_board", "open_runtime"]


def lab_board(lab: Lab) -> LabBoard:
    """The lab's one board: build it once per process and pass it to every poster."""
    return LabBoard(lab.db, lab.events, lab.teams)


@asynccontextmanager
async def open_runtime(
    settings: Settings,
    *,
    slots: int | None = None,
    lab: Lab | None = None,
    board: LabBoard | None = None,
) -> AsyncIterator[LabRuntime]:
    """Open the runtime on `lab` when given (the caller keeps it open and closes it), else on
    a lab of its own; on `board` when given (the server's, shared with A2A), else on one built
    here."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from justkernel.agents.signatures import remember_signatures
    from justkernel.agents.tracing import keep_traces_local
    from justkernel.app.checkpoint_scrub import durable_enough, scrub_checkpoints

    keep_traces_local()  # before any agent runs: nothing is traced, and tracing off costs nothing
    remember_signatures()  # LangChain's per-call signature questions, answered once a function
    operator = load_operator()
    toolchains = Toolchains(settings.toolchains_dir)
    pool = build_pool(settings, toolchains, local_slots=slots)  # a bad hosts file fails here
    owned = lab is None
    targets: RuntimeTargets | None = None
    try:
        if lab is None:
            lab = await open_lab(settings)
        targets = RuntimeTargets(settings, pool, toolchains, lab.blobs, operator)
        default = targets.get(settings.toolchain)
        presets = load_model_presets(settings.models_local_file)
        checkpoints = settings.resolved_data_dir / "checkpoints.db"
        async with AsyncSqliteSaver.from_conn_string(str(checkpoints)) as saver:
            await durable_enough(saver)
            scrub_checkpoints(saver)  # defence in depth: no known secret is written to it
            board = board if board is not None else lab_board(lab)
            runtime = LabRuntime(
                lab,
                default.operator,
                pool,
                default.evaluator,
                presets,
                saver,
                board,
                targets,
            )
            async with runtime.resources:
                yield runtime
    finally:
        if targets is not None:
            await targets.close()
        await pool.close()
        if owned and lab is not None:
            await lab.close()
