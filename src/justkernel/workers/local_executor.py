"""This machine as an executor: the toolchain runs in-process, one job per slot.

This is what the lab always did; it is an executor like the remote ones so that the pool can
weigh local slots and remote slots the same way and re-queue a lost remote job here. It runs a
job with whichever of the lab's built toolchains the job names (`toolchains.registry
.Toolchains`, the runtime's one cache), so one pool serves runs of different targets.
"""

from __future__ import annotations

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import Receipt
from justkernel.toolchains.protocol import Progress, Toolchain, ToolchainError
from justkernel.toolchains.registry import Toolchains
from justkernel.workers.executor import ExecRequest, HostState, StateListener


class LocalExecutor:
    """Runs jobs on this machine with the toolchain they name among `toolchains` (a cache, or
    one instance); always up."""

    pool_lanes = True

    def __init__(
        self,
        toolchains: Toolchains | Toolchain,
        slots: int,
        devices: int = 0,
        name: str = "local",
    ) -> None:
        if not 1 <= slots <= 64:
            raise ValueError(f"slots must be between 1 and 64, got {slots}")
        if not isinstance(toolchains, Toolchains):
            toolchains = Toolchains.holding(toolchains)
        self.toolchains = toolchains
        self.name = name
        self.slots = slots
        self.devices = devices
        self.state = HostState()

    def accepts(self, spec: JobSpec) -> bool:
        """A job of a toolchain the lab has built, at that toolchain's version."""
        return self.toolchains.find(spec.toolchain_id, spec.toolchain_version) is not None

    def on_state_change(self, listener: StateListener) -> None:
        """Never changes: this machine does not go away while the lab runs on it."""

    async def start(self) -> None:
        return None

    async def run(
        self, request: ExecRequest, slot: int, device: int | None, progress: Progress
    ) -> Receipt:
        spec = request.spec
        toolchain = self.toolchains.find(spec.toolchain_id, spec.toolchain_version)
        if toolchain is None:
            raise ToolchainError(
                f"{self.name}: no {spec.toolchain_id} {spec.toolchain_version} built here"
            )
        return await toolchain.run(
            spec,
            request.source_dir,
            request.packs,
            request.workdir,
            slot,
            parallelism=request.parallelism,
            progress=progress,
        )

    async def close(self) -> None:
        return None
