"""The pool's queue: per priority, per team FIFOs, teams served in turn.

Within a priority the team served least recently goes next (a team never served goes before
any that was), so one team's burst of submissions never makes another team wait for it all.
`pop` takes a predicate so the pool can ask for "the fairest job this slot can take" (a device
lane, a host with the right toolchain).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Protocol


class _Queued(Protocol):
    @property
    def job(self) -> Any: ...


class FairQueue:
    def __init__(self) -> None:
        self._classes: dict[int, dict[str, deque[Any]]] = {}
        self._last_served: dict[str, int] = {}
        self._dispatches = 0

    def push(self, handle: _Queued, *, front: bool = False) -> None:
        teams = self._classes.setdefault(int(handle.job.priority), {})
        queue = teams.setdefault(handle.job.team, deque())
        if front:  # a re-queued job keeps its place at the head of its team's line
            queue.appendleft(handle)
        else:
            queue.append(handle)

    def pop(self, fits: Callable[[Any], bool]) -> Any | None:
        """The fairest queued handle whose job `fits`, removed from the queue; or None."""
        for priority in sorted(self._classes):
            teams = self._classes[priority]
            ranked = sorted(teams, key=lambda team: self._last_served.get(team, -1))
            for team in ranked:
                queue = teams[team]
                for handle in queue:
                    if not fits(handle.job):
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

    def remove(self, handle: _Queued) -> bool:
        teams = self._classes.get(int(handle.job.priority), {})
        queue = teams.get(handle.job.team)
        if queue is None or handle not in queue:
            return False
        queue.remove(handle)
        if not queue:
            del teams[handle.job.team]
        if not teams:
            self._classes.pop(int(handle.job.priority), None)
        return True

    def __len__(self) -> int:
        return sum(len(q) for teams in self._classes.values() for q in teams.values())
