"""The lab's targets in one process: per toolchain id, the toolchain (built once, lazily,
through the registry's one cache), the operator view it builds (`for_toolchain`) and the
evaluator on the shared pool. A run names its target in its meta (`toolchain`); everything of
the run (workspaces, receipts, candidates, the Judger's review) goes through that target, so a
run never mixes targets, whatever the lab's default is now.

The pool's local executor holds the same cache, so with remote hosts it accepts jobs of every
target built here; each target's trusted artefacts live under `<cache_dir>/toolchains/<id>/`,
built once per machine."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from justkernel.core.targets import TOOLCHAIN_IDS, ToolchainId, run_toolchain
from justkernel.operators import OperatorDefinition
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.toolchains.protocol import Toolchain
from justkernel.toolchains.registry import Toolchains
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.pool import WorkerPool

log = logging.getLogger("justkernel.app.targets")

Announce = Callable[[str], Awaitable[None] | None]  # told the line to show when warming starts
__all__ = ["Announce", "RuntimeTargets", "Target", "run_toolchain"]


@dataclass(frozen=True)
class Target:
    """What a run of one target works with."""

    toolchain_id: ToolchainId
    toolchain: Toolchain
    operator: OperatorDefinition  # the project view the toolchain builds
    evaluator: Evaluator


class RuntimeTargets:
    """The targets of one runtime, each built on first use and then shared."""

    def __init__(
        self,
        settings: Settings,
        pool: WorkerPool,
        toolchains: Toolchains,
        blobs: BlobStore,
        operator: OperatorDefinition,
    ) -> None:
        self.settings = settings
        self.pool = pool
        self.toolchains = toolchains
        self.blobs = blobs
        self.operator = operator  # the operator as defined (its C port view)
        self._targets: dict[str, Target] = {}
        self._warm: dict[str, asyncio.Task[float | None]] = {}

    def get(self, toolchain_id: str) -> Target:
        """The target `toolchain_id`, built on first use (ValueError for an unknown id)."""
        if toolchain_id not in TOOLCHAIN_IDS:
            known = ", ".join(TOOLCHAIN_IDS)
            raise ValueError(f"unknown toolchain {toolchain_id!r} (known: {known})")
        if toolchain_id not in self._targets:
            toolchain = self.toolchains.get(toolchain_id, self.operator.name)
            view = self.operator.for_toolchain(toolchain_id)
            evaluator = Evaluator(self.settings, self.pool, toolchain, self.blobs, definition=view)
            self._targets[toolchain_id] = Target(toolchain_id, toolchain, view, evaluator)  # type: ignore[arg-type]
        return self._targets[toolchain_id]

    def prepare(
        self, toolchain_id: str, announce: Announce | None = None
    ) -> asyncio.Task[float | None]:
        """Start, once per target, building what every job of it shares (the ascendc-cpu
        harness main and precompiled headers, ~15 CPU-s the first time on a machine), beside
        the run rather than inside its first job. Returns the task (seconds taken, or None
        when the toolchain has nothing to warm); a failure is logged, the jobs then build it."""
        if toolchain_id not in self._warm:
            toolchain = self.get(toolchain_id).toolchain
            warm = getattr(toolchain, "warm", None)
            self._warm[toolchain_id] = asyncio.create_task(
                self._warmed(toolchain_id, warm, announce)
            )
        return self._warm[toolchain_id]

    async def _warmed(
        self, toolchain_id: str, warm: Callable[[], Any] | None, announce: Announce | None
    ) -> float | None:
        if warm is None:
            return None
        message = f"preparing the {toolchain_id} toolchain (one-time build)"
        log.info(message)
        if announce is not None:
            told = announce(message)
            if inspect.isawaitable(told):
                await told
        try:
            seconds: float = await warm()
        except Exception:
            log.exception(
                "preparing the %s toolchain failed; its first job builds it", toolchain_id
            )
            return None
        log.info("the %s toolchain is ready (%.1f s)", toolchain_id, seconds)
        return seconds

    async def close(self) -> None:
        for task in self._warm.values():
            task.cancel()
        for task in self._warm.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
