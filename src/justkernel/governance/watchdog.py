"""The stall watchdog: counts model responses and time without progress.

Progress is a source change or a new experiment; reading files and writing notes are not.
A nudge comes at 12 responses or 5 minutes without progress, a pause at 24 or 10 minutes (all
configurable). A team paused for lack of progress is not dispatched again on the same evidence:
only a new receipt, a source change, a new evaluation environment or a new goal makes it
eligible again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Verdict = Literal["ok", "nudge", "pause"]


@dataclass(frozen=True)
class WatchdogLimits:
    nudge_responses: int = 12
    nudge_seconds: float = 300.0
    pause_responses: int = 24
    pause_seconds: float = 600.0


@dataclass
class _TeamClock:
    responses: int = 0
    since: float = 0.0
    nudged: bool = False
    evidence: tuple[str, ...] | None = None  # what the team was paused on


@dataclass
class Watchdog:
    limits: WatchdogLimits = field(default_factory=WatchdogLimits)
    clock: Callable[[], float] = time.monotonic
    _teams: dict[str, _TeamClock] = field(default_factory=dict)

    def _team(self, team: str) -> _TeamClock:
        if team not in self._teams:
            self._teams[team] = _TeamClock(since=self.clock())
        return self._teams[team]

    def on_response(self, team: str) -> Verdict:
        """Count one model response and say what the team has earned."""
        state = self._team(team)
        state.responses += 1
        return self.verdict(team)

    def verdict(self, team: str) -> Verdict:
        state = self._team(team)
        idle = self.clock() - state.since
        if state.responses >= self.limits.pause_responses or idle >= self.limits.pause_seconds:
            return "pause"
        if not state.nudged and (
            state.responses >= self.limits.nudge_responses or idle >= self.limits.nudge_seconds
        ):
            return "nudge"
        return "ok"

    def nudged(self, team: str) -> None:
        self._team(team).nudged = True

    def on_progress(self, team: str) -> None:
        state = self._team(team)
        state.responses, state.since, state.nudged = 0, self.clock(), False

    def paused(self, team: str, evidence: tuple[str, ...]) -> None:
        """Remember the evidence the team stalled on."""
        self._team(team).evidence = evidence

    def eligible(self, team: str, evidence: tuple[str, ...]) -> bool:
        """A paused team may run again only when its evidence changed."""
        state = self._team(team)
        if state.evidence is None or state.evidence != evidence:
            if state.evidence is not None:
                state.evidence = None
                self.on_progress(team)
            return True
        return False
