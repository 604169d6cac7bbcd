"""This machine as an executor: the toolchain runs in-process, one job per slot.

This is what the lab always did; it is an executor like the remote ones so that the pool can
weigh local slots and remote slots the same way and re-queue a lost remote job here.
"""

from __future__ import annotations

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import Receipt
from justkernel.toolchains.protocol import Progress, Toolchain
from justkernel.workers.executor import ExecRequest, HostState, StateListener


class LocalExecutor:
    """Runs jobs with `toolchain` on this machine; always up."""

    pool_lanes = True

    def __init__(
        self, toolchain: Toolchain, slots: int, devices: int = 0, name: str = "local"
    ) -> None:
        if not 1 <= slots <= 64:
            raise ValueError(f"slots must be between 1 and 64, got {slots}")
        self.toolchain = toolchain
        self.name = name
        self.slots = slots
        self.devices = devices
        self.state = HostState()

    def accepts(self, spec: JobSpec) -> bool:
        return (spec.toolchain_id, spec.toolchain_version) == (
            self.toolchain.id,
            self.toolchain.version,
        )

    def on_state_change(self, listener: StateListener) -> None:
        """Never changes: this machine does not go away while the lab runs on it."""

    async def start(self) -> None:
        return None

    async def run(
        self, request: ExecRequest, slot: int, device: int | None, progress: Progress
    ) -> Receipt:
        return await self.toolchain.run(
            request.spec,
            request.source_dir,
            request.packs,
            request.workdir,
            slot,
            parallelism=request.parallelism,
            progress=progress,
        )

    async def close(self) -> None:
        return None
