"""The working lab: the services of `Lab` plus the evaluator, the worker pool, the model
presets and the agents' checkpointer, opened and closed together. The pool comes from
`hosts.toml` (`workers.pool_config`): local slots, SSH hosts, a Dask cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from justkernel.lab import Lab, open_lab
from justkernel.operators import OperatorDefinition, load_operator
from justkernel.settings.config import Settings
from justkernel.settings.models import ModelPreset, load_model_presets
from justkernel.toolchains.cpu import CpuToolchain
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.pool import WorkerPool
from justkernel.workers.pool_config import build_pool, default_slots


@dataclass
class LabRuntime:
    lab: Lab
    operator: OperatorDefinition
    pool: WorkerPool
    evaluator: Evaluator
    presets: dict[str, ModelPreset]
    checkpointer: Any

    def scheduler(self, run_id: str, config: Any = None) -> Any:
        from justkernel.scheduler.scheduler import Scheduler

        return Scheduler(
            self.lab,
            run_id,
            self.operator,
            self.evaluator,
            self.presets,
            self.checkpointer,
            config,
        )


__all__ = ["LabRuntime", "default_slots", "open_runtime"]


@asynccontextmanager
async def open_runtime(
    settings: Settings, *, slots: int | None = None
) -> AsyncIterator[LabRuntime]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    operator = load_operator()
    toolchain = CpuToolchain(operator)
    pool = build_pool(settings, toolchain, local_slots=slots)  # a bad hosts file fails here
    lab = await open_lab(settings)
    evaluator = Evaluator(settings, pool, toolchain, lab.blobs)
    presets = load_model_presets(settings.models_local_file)
    checkpoints = settings.resolved_data_dir / "checkpoints.db"
    try:
        async with AsyncSqliteSaver.from_conn_string(str(checkpoints)) as saver:
            yield LabRuntime(lab, operator, pool, evaluator, presets, saver)
    finally:
        await pool.close()
        await lab.close()
