"""The worker pool: slots on one or more executors, fair share across teams, priorities,
cancellation, exclusive device lanes, and re-queueing when a host goes away.

Dispatch order: the most urgent priority class first (a full validation before probes); within
a class, teams take turns (round robin, `fair_queue.FairQueue`). A slot is (executor, index):
the next job goes to the executor that is up and has the largest share of its slots free, so a
1-slot and a 3-slot host get work in proportion. A performance job (`perf`) also takes one of
its executor's device lanes, one job per (executor, device) at a time, while compile and
functional jobs keep flowing through the other slots.

When an executor fails a job with `HostError` the job goes back to the head of its team's
queue: a job that never started there is re-queued freely, a job lost mid-run once (the second
loss is the caller's error). The failing executor marks itself down, so the job lands elsewhere;
when it comes back up it tells the pool, which dispatches again.

`LocalPool(slots, devices)` is the pool of one anonymous local site: `work` receives a
`SlotGrant` without an executor and does the work itself (the original behaviour).
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from justkernel.workers.executor import Executor, HostError
from justkernel.workers.fair_queue import FairQueue

R = TypeVar("R")
log = logging.getLogger("justkernel.workers")

MAX_LOST_RUNS = 1  # a job lost mid-run is re-queued once
MAX_REFUSALS = 10  # a job that no host would start fails after this many refusals


class Priority(enum.IntEnum):
    """Lower runs first."""

    FULL_VALIDATION = 0
    SIMULATION = 1
    PROBE = 2


class JobCancelled(Exception):
    """The job was cancelled before or while it ran."""


@dataclass
class Job(Generic[R]):
    """One unit of work for a slot; `work` receives the slot (and device) it was given.

    `needs_device`: only sites with devices take it (strict). `perf`: a performance job, which
    takes a device lane where its site has lanes and a plain slot where it has none.
    `eligible(executor)` narrows the sites (None: the anonymous local site).
    """

    team: str
    work: Callable[[SlotGrant], Awaitable[R]]
    priority: Priority = Priority.SIMULATION
    needs_device: bool = False
    label: str = ""
    id: int = field(default_factory=itertools.count(1).__next__)
    submitted_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    finished_at: float | None = None
    perf: bool = False
    eligible: Callable[[Executor | None], bool] | None = None
    on_requeue: Callable[[HostError], None] | None = None
    lost_runs: int = 0
    refusals: int = 0
    site: str | None = None  # where it ran (last)


@dataclass(frozen=True)
class SlotGrant:
    slot: int
    device: int | None
    site: str = "local"
    executor: Executor | None = None


class JobHandle(Generic[R]):
    def __init__(self, job: Job[R], pool: WorkerPool) -> None:
        self.job = job
        self._pool = pool
        self.future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[Any] | None = None

    def cancel(self) -> bool:
        return self._pool.cancel(self)

    def __await__(self):  # type: ignore[no-untyped-def]
        return self.future.__await__()


@dataclass
class PoolStats:
    """Slot occupancy over time: how busy the slots were while work was queued."""

    busy_seconds: float = 0.0
    wall_seconds_with_work: float = 0.0
    completed: int = 0
    cancelled: int = 0
    failed: int = 0
    requeued: int = 0
    completed_by_site: Counter[str] = field(default_factory=Counter)

    def utilization(self, slots: int) -> float | None:
        if self.wall_seconds_with_work <= 0:
            return None
        return self.busy_seconds / (self.wall_seconds_with_work * slots)


class _Site:
    """One executor's slots and device lanes as the pool books them."""

    def __init__(
        self, name: str, slots: int, devices: int, executor: Executor | None, order: int
    ) -> None:
        self.name = name
        self.slots = slots
        self.devices = devices
        self.executor = executor
        self.order = order
        self.free_slots = list(range(slots))
        self.free_devices = list(range(devices))

    @property
    def up(self) -> bool:
        return self.executor is None or self.executor.state.up

    @property
    def lanes(self) -> bool:
        """The pool runs this site's device lanes (a Dask cluster runs its own)."""
        return self.devices > 0 and (self.executor is None or self.executor.pool_lanes)

    def fits(self, job: Job[Any]) -> bool:
        if job.eligible is not None and not job.eligible(self.executor):
            return False
        if job.needs_device and self.devices == 0:
            return False
        if (job.needs_device or job.perf) and self.lanes:
            return bool(self.free_devices)
        return True

    def share_free(self) -> tuple[float, int, int]:
        return (-len(self.free_slots) / self.slots, -len(self.free_slots), self.order)


class WorkerPool:
    """Slots over executors; see the module docstring. Owns (and closes) its executors."""

    def __init__(self, executors: Sequence[Executor] = ()) -> None:
        self._sites: list[_Site] = []
        self._queue = FairQueue()
        self._running: set[JobHandle[Any]] = set()
        self.stats = PoolStats()
        self._mark = time.monotonic()
        self._closed = False
        for executor in executors:
            self.add(executor)

    def add(self, executor: Executor) -> None:
        """Add an executor's slots; the pool dispatches again whenever it goes up."""
        if any(s.name == executor.name for s in self._sites):
            raise ValueError(f"two executors are named {executor.name!r}")
        self._add_site(executor.name, executor.slots, executor.devices, executor)
        executor.on_state_change(self._wake)

    def _add_site(self, name: str, slots: int, devices: int, executor: Executor | None) -> None:
        self._sites.append(_Site(name, slots, devices, executor, len(self._sites)))

    @property
    def executors(self) -> list[Executor]:
        return [s.executor for s in self._sites if s.executor is not None]

    @property
    def slots(self) -> int:
        return sum(s.slots for s in self._sites)

    @property
    def devices(self) -> int:
        return sum(s.devices for s in self._sites)

    async def start(self) -> None:
        """Let every executor connect (failures only mark hosts down)."""
        await asyncio.gather(*(e.start() for e in self.executors))

    # -- accounting: integrate busy slots over time while anything is queued or running --
    def _tick(self) -> None:
        now = time.monotonic()
        elapsed = now - self._mark
        if self._running or len(self._queue):
            self.stats.wall_seconds_with_work += elapsed
            self.stats.busy_seconds += elapsed * len(self._running)
        self._mark = now

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def running(self) -> int:
        return len(self._running)

    def submit(self, job: Job[R]) -> JobHandle[R]:
        if self._closed:
            raise RuntimeError("pool is closed")
        if job.needs_device and self.devices == 0:
            raise ValueError("job needs a device but this pool has none")
        self._tick()
        handle = JobHandle(job, self)
        self._queue.push(handle)
        self._dispatch()
        return handle

    def cancel(self, handle: JobHandle[Any]) -> bool:
        """Cancel a queued job (removed) or a running one (its task is cancelled)."""
        if handle.future.done():
            return False
        self._tick()
        if self._queue.remove(handle):
            handle.future.set_exception(JobCancelled(f"job {handle.job.id} cancelled in queue"))
            self.stats.cancelled += 1
            return True
        if handle.task is not None:
            handle.task.cancel()
            return True
        return False

    def _wake(self) -> None:
        if not self._closed:
            self._dispatch()

    def _dispatch(self) -> None:
        while True:
            sites = sorted((s for s in self._sites if s.free_slots and s.up), key=_Site.share_free)
            for site in sites:
                handle = self._queue.pop(site.fits)
                if handle is not None:
                    self._start(handle, site)
                    break
            else:
                return

    def _start(self, handle: JobHandle[Any], site: _Site) -> None:
        job = handle.job
        slot = site.free_slots.pop(0)
        device = None
        if (job.needs_device or job.perf) and site.lanes:
            device = site.free_devices.pop(0)
        self._running.add(handle)
        job.started_at = time.monotonic()
        job.site = site.name
        grant = SlotGrant(slot, device, site.name, site.executor)
        handle.task = asyncio.create_task(self._run(handle, site, grant))

    async def _run(self, handle: JobHandle[Any], site: _Site, grant: SlotGrant) -> None:
        requeue: HostError | None = None
        try:
            result = await handle.job.work(grant)
        except asyncio.CancelledError:
            if not handle.future.done():
                handle.future.set_exception(JobCancelled(f"job {handle.job.id} cancelled"))
            self.stats.cancelled += 1
        except HostError as exc:
            if self._may_requeue(handle.job, exc):
                requeue = exc
            else:
                self._fail(handle, exc)
        except Exception as exc:
            self._fail(handle, exc)
        else:
            if not handle.future.done():
                handle.future.set_result(result)
            self.stats.completed += 1
            self.stats.completed_by_site[site.name] += 1
        finally:
            self._tick()
            handle.job.finished_at = time.monotonic()
            self._running.discard(handle)
            site.free_slots.append(grant.slot)
            site.free_slots.sort()
            if grant.device is not None:
                site.free_devices.append(grant.device)
                site.free_devices.sort()
            if requeue is not None:
                self._requeue(handle, requeue)
            if not self._closed:
                self._dispatch()

    @staticmethod
    def _may_requeue(job: Job[Any], exc: HostError) -> bool:
        if exc.started:
            job.lost_runs += 1
            return job.lost_runs <= MAX_LOST_RUNS
        job.refusals += 1
        return job.refusals <= MAX_REFUSALS

    def _fail(self, handle: JobHandle[Any], exc: BaseException) -> None:
        if not handle.future.done():
            handle.future.set_exception(exc)
        self.stats.failed += 1

    def _requeue(self, handle: JobHandle[Any], exc: HostError) -> None:
        if self._closed or handle.future.done():
            return
        log.warning("job %s (%s) re-queued: %s", handle.job.id, handle.job.label, exc)
        self.stats.requeued += 1
        handle.job.started_at = None
        handle.task = None
        if handle.job.on_requeue is not None:
            handle.job.on_requeue(exc)
        self._queue.push(handle, front=True)

    async def close(self) -> None:
        """Cancel everything queued and running, wait for running jobs to unwind, and close
        the executors."""
        self._closed = True
        while True:
            handle = self._queue.pop(lambda _job: True)
            if handle is None:
                break
            handle.future.set_exception(JobCancelled("pool closed"))
        tasks = [h.task for h in self._running if h.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(e.close() for e in self.executors), return_exceptions=True)


class LocalPool(WorkerPool):
    """The pool of one anonymous local site with `slots` slots and `devices` lanes."""

    def __init__(self, slots: int, devices: int = 0) -> None:
        if not 1 <= slots <= 64:
            raise ValueError(f"slots must be between 1 and 64, got {slots}")
        super().__init__()
        self._add_site("local", slots, devices, None)
