"""What every executor offers the pool: slots, device lanes, a health state, and `run`.

An executor is one place where jobs run: this machine (`local_executor`), one SSH host
(`ssh.executor`) or a Dask cluster (`dask.executor`). The pool (`pool.WorkerPool`) owns the
queue, fair share and priorities; an executor only runs the job it is handed on the slot it is
given and returns the same `Receipt` the local toolchain would. Every executor answers the same
`JobSpec`, so a receipt computed on any of them is a cache hit on all the others.

Failures of the place (not of the candidate) raise `HostError`: the pool re-queues the job
elsewhere, so no job is lost because a host went away.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import Receipt
from justkernel.operators import InputPack
from justkernel.toolchains.protocol import Progress


@dataclass(frozen=True)
class ExecRequest:
    """One job as the evaluator hands it to an executor.

    `source_dir` is the evaluator's private snapshot; logs must end up in
    `workdir/logs/<sha256>` on this machine, wherever the job ran.
    """

    spec: JobSpec
    source_dir: Path
    packs: Mapping[str, InputPack]
    workdir: Path
    parallelism: int = 1
    team: str = ""


class HostError(RuntimeError):
    """The place failed, not the candidate. `started` says whether the job may have run there
    (it then counts against the job's one re-queue); the message always names the host."""

    def __init__(self, host: str, message: str, *, started: bool = False) -> None:
        super().__init__(f"host {host}: {message}")
        self.host = host
        self.reason = message
        self.started = started


class HostUnavailable(HostError):
    """The job could not start there (connection, authentication, host key, disk)."""


class HostLost(HostError):
    """The host stopped answering while the job ran (its lease expired)."""

    def __init__(self, host: str, message: str) -> None:
        super().__init__(host, message, started=True)


@dataclass
class HostState:
    """Up or down, why, and since when; shown by `justkernel check` and the pool."""

    up: bool = True
    error: str | None = None  # the latest failure (a probe's, while down)
    cause: str | None = None  # why it went down
    since: float = field(default_factory=time.time)
    probes: int = 0  # failed probes since the host went down

    def mark_down(self, error: str) -> bool:
        """Record the failure; True when this changed the state (it was up)."""
        changed = self.up
        self.up, self.error = False, error
        if changed:
            self.since, self.probes, self.cause = time.time(), 0, error
        return changed

    def mark_up(self) -> bool:
        changed = not self.up
        self.up, self.error, self.cause, self.probes = True, None, None, 0
        if changed:
            self.since = time.time()
        return changed


StateListener = Callable[[], None]


@runtime_checkable
class Executor(Protocol):
    """A place with `slots` job slots and `devices` logical devices.

    `pool_lanes`: whether the pool runs the device lanes (one performance job per device at a
    time). A Dask cluster does that itself with worker resources, so it says False.
    """

    name: str
    slots: int
    devices: int
    pool_lanes: bool
    state: HostState

    def accepts(self, spec: JobSpec) -> bool:
        """Whether this place runs `spec`'s toolchain at exactly its version."""
        ...

    def on_state_change(self, listener: StateListener) -> None:
        """Call `listener` (on the event loop) whenever the host goes up or down."""
        ...

    async def start(self) -> None:
        """Connect (or check) eagerly; failures only mark the host down."""
        ...

    async def run(
        self, request: ExecRequest, slot: int, device: int | None, progress: Progress
    ) -> Receipt:
        """Run the job; raise HostError when the place fails (ToolchainError and SandboxError
        still mean the infrastructure of the job itself failed there)."""
        ...

    async def close(self) -> None: ...


def check_receipt(host: str, spec: JobSpec, receipt: Receipt) -> Receipt:
    """A receipt from elsewhere must be for exactly this job, or it is not evidence."""
    if receipt.job_key != spec.job_key() or receipt.source_sha256 != spec.source_tree_hash:
        raise HostError(host, f"returned a receipt for another job ({receipt.job_key[:12]})")
    if (receipt.executor.toolchain_id, receipt.executor.toolchain_version) != (
        spec.toolchain_id,
        spec.toolchain_version,
    ):
        raise HostError(host, "returned a receipt from another toolchain version")
    return receipt


def pack_bytes(packs: Mapping[str, InputPack]) -> dict[str, int]:
    """Bytes on disk of each pack by hash (what an upload costs)."""
    sizes = {}
    for pack in packs.values():
        sizes[pack.pack_hash] = sum(
            p.stat().st_size for p in Path(pack.root).rglob("*") if p.is_file()
        )
    return sizes
