"""Named crash points for the fault-injection tests: the lab dies on the spot, as a power cut
or `kill -9` would kill it, at a moment a test chose.

`JUSTKERNEL_CRASH_AT=<point>` (or `<point>:<n>` for its n-th hit) makes `crash_point(<point>)`
send SIGKILL to its own process: no cleanup, no `finally`, no flush. The variable is read once,
at the first crash point reached. It is test-only: the lab never sets it, and without it every
crash point does nothing.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field

ENV = "JUSTKERNEL_CRASH_AT"

POINTS = frozenset(
    {
        "simulate.running",  # a team's cycle simulation is running
        "freeze.after",  # a candidate is frozen, the Judger has not seen it
        "submit.window",  # the judge accepted a submission, the lab has not recorded it
        "official.before_feedback",  # an official result is stored, its feedback not posted
        "feedback.delivering",  # a feedback delivery is being handed out or acknowledged
    }
)


@dataclass
class CrashPlan:
    """Which point kills the process, and at which hit; counts the hits so far."""

    point: str | None = None
    nth: int = 1
    hits: int = field(default=0)

    @classmethod
    def parse(cls, value: str | None) -> CrashPlan:
        if not value:
            return cls()
        name, _, count = value.strip().partition(":")
        if name not in POINTS:
            known = ", ".join(sorted(POINTS))
            raise ValueError(f"{ENV}={value!r}: unknown crash point (known: {known})")
        try:
            nth = int(count) if count else 1
        except ValueError:
            raise ValueError(f"{ENV}={value!r}: the hit after ':' must be a number") from None
        if nth < 1:
            raise ValueError(f"{ENV}={value!r}: the hit after ':' must be 1 or more")
        return cls(name, nth)

    def reached(self, point: str) -> bool:
        """Count a hit of `point`; whether this is the hit the plan dies at."""
        if point not in POINTS:
            raise ValueError(f"unknown crash point {point!r}")
        if point != self.point:
            return False
        self.hits += 1
        return self.hits == self.nth


_plan: CrashPlan | None = None  # the process's plan, read from the environment at first use


def crash_point(point: str) -> None:
    """Die here by SIGKILL when `JUSTKERNEL_CRASH_AT` names this point (and hit)."""
    global _plan
    if _plan is None:
        _plan = CrashPlan.parse(os.environ.get(ENV))
    if _plan.reached(point):
        os.kill(os.getpid(), signal.SIGKILL)
