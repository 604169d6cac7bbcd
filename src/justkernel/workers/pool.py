"""The local worker pool: N slots, fair share across teams, priorities, cancellation, and
exclusive device lanes.

Dispatch order: the most urgent priority class first (a full validation before probes); within
a class, teams take turns (round robin), so one team's burst of submissions never makes another
team wait for the whole burst. A job that needs a device also takes one of the pool's logical
devices for itself; while all devices are busy, other work keeps flowing past it.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

R = TypeVar("R")


class Priority(enum.IntEnum):
    """Lower runs first."""

    FULL_VALIDATION = 0
    SIMULATION = 1
    PROBE = 2


class JobCancelled(Exception):
    """The job was cancelled before or while it ran."""


@dataclass
class Job(Generic[R]):
    """One unit of work for a slot; `work` receives the slot (and device) it was given."""

    team: str
    work: Callable[[SlotGrant], Awaitable[R]]
    priority: Priority = Priority.SIMULATION
    needs_device: bool = False
    label: str = ""
    id: int = field(default_factory=itertools.count(1).__next__)
    submitted_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    finished_at: float | None = None


@dataclass(frozen=True)
class SlotGrant:
    slot: int
    device: int | None


class JobHandle(Generic[R]):
    def __init__(self, job: Job[R], pool: LocalPool) -> None:
        self.job = job
        self._pool = pool
        self.future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[Any] | None = None

    def cancel(self) -> bool:
        return self._pool.cancel(self)

    def __await__(self):  # type: ignore[no-untyped-def]
        return self.future.__await__()


class _FairQueue:
    """Per priority, per team FIFO queues. Within a priority the team served least recently
    goes next (a team never served goes before any that was), so a burst waits its turn."""

    def __init__(self) -> None:
        self._classes: dict[int, dict[str, deque[JobHandle[Any]]]] = {}
        self._last_served: dict[str, int] = {}
        self._dispatches = 0

    def push(self, handle: JobHandle[Any]) -> None:
        teams = self._classes.setdefault(int(handle.job.priority), {})
        teams.setdefault(handle.job.team, deque()).append(handle)

    def pop(self, can_take_device: bool) -> JobHandle[Any] | None:
        for priority in sorted(self._classes):
            teams = self._classes[priority]
            ranked = sorted(teams, key=lambda team: self._last_served.get(team, -1))
            for team in ranked:
                queue = teams[team]
                for handle in queue:
                    if handle.job.needs_device and not can_take_device:
                        continue
                    queue.remove(handle)
                    if not queue:
                        del teams[team]
                    if not teams:
                        del self._classes[priority]
                    self._dispatches += 1
                    self._last_served[team] = self._dispatches
                    return handle
        return None

    def remove(self, handle: JobHandle[Any]) -> bool:
        teams = self._classes.get(int(handle.job.priority), {})
        queue = teams.get(handle.job.team)
        if queue is None or handle not in queue:
            return False
        queue.remove(handle)
        if not queue:
            del teams[handle.job.team]
        return True

    def __len__(self) -> int:
        return sum(len(q) for teams in self._classes.values() for q in teams.values())


@dataclass
class PoolStats:
    """Slot occupancy over time: how busy the slots were while work was queued."""

    busy_seconds: float = 0.0
    wall_seconds_with_work: float = 0.0
    completed: int = 0
    cancelled: int = 0
    failed: int = 0

    def utilization(self, slots: int) -> float | None:
        if self.wall_seconds_with_work <= 0:
            return None
        return self.busy_seconds / (self.wall_seconds_with_work * slots)


class LocalPool:
    def __init__(self, slots: int, devices: int = 0) -> None:
        if not 1 <= slots <= 64:
            raise ValueError(f"slots must be between 1 and 64, got {slots}")
        self.slots = slots
        self.devices = devices
        self._queue = _FairQueue()
        self._free_slots = list(range(slots))
        self._free_devices = list(range(devices))
        self._running: set[JobHandle[Any]] = set()
        self.stats = PoolStats()
        self._mark = time.monotonic()
        self._closed = False

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

    def _dispatch(self) -> None:
        while self._free_slots:
            handle = self._queue.pop(can_take_device=bool(self._free_devices))
            if handle is None:
                return
            slot = self._free_slots.pop(0)
            device = self._free_devices.pop(0) if handle.job.needs_device else None
            self._running.add(handle)
            handle.job.started_at = time.monotonic()
            handle.task = asyncio.create_task(self._run(handle, SlotGrant(slot, device)))

    async def _run(self, handle: JobHandle[Any], grant: SlotGrant) -> None:
        try:
            result = await handle.job.work(grant)
        except asyncio.CancelledError:
            if not handle.future.done():
                handle.future.set_exception(JobCancelled(f"job {handle.job.id} cancelled"))
            self.stats.cancelled += 1
        except Exception as exc:
            if not handle.future.done():
                handle.future.set_exception(exc)
            self.stats.failed += 1
        else:
            if not handle.future.done():
                handle.future.set_result(result)
            self.stats.completed += 1
        finally:
            self._tick()
            handle.job.finished_at = time.monotonic()
            self._running.discard(handle)
            self._free_slots.append(grant.slot)
            self._free_slots.sort()
            if grant.device is not None:
                self._free_devices.append(grant.device)
                self._free_devices.sort()
            if not self._closed:
                self._dispatch()

    async def close(self) -> None:
        """Cancel everything queued and running, and wait for running jobs to unwind."""
        self._closed = True
        while True:
            handle = self._queue.pop(can_take_device=True)
            if handle is None:
                break
            handle.future.set_exception(JobCancelled("pool closed"))
        tasks = [h.task for h in self._running if h.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
