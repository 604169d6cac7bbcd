"""How much the judge accepts: a sliding-window rate per key and the contest's daily quota.

The quota day turns at 00:00 Asia/Shanghai, as on the contest site; the clock is injected so
a test can move it past midnight. The rate window uses the monotonic clock: wall-clock jumps
must not open or close it.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

CONTEST_TZ = ZoneInfo("Asia/Shanghai")


def utc_now() -> datetime:
    return datetime.now(UTC)


def quota_day(now: datetime) -> str:
    """The contest day `now` falls in (ISO date in Asia/Shanghai)."""
    return now.astimezone(CONTEST_TZ).date().isoformat()


def next_reset(now: datetime) -> datetime:
    """The next 00:00 Asia/Shanghai after `now`, in UTC."""
    local = now.astimezone(CONTEST_TZ)
    midnight = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), CONTEST_TZ)
    return midnight.astimezone(UTC)


class SlidingWindow:
    """At most `limit` events per key in any `window` seconds."""

    def __init__(
        self, limit: int, window: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if limit < 1 or window <= 0:
            raise ValueError("a rate needs limit >= 1 and a positive window")
        self.limit = limit
        self.window = window
        self.clock = clock
        self._events: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float]:
        now = self.clock()
        events = self._events.setdefault(key, deque())
        while events and events[0] <= now - self.window:
            events.popleft()
        return events

    def wait_seconds(self, key: str) -> int | None:
        """Whole seconds until one more event is allowed, or None when it is allowed now."""
        events = self._recent(key)
        if len(events) < self.limit:
            return None
        return max(1, math.ceil(events[0] + self.window - self.clock()))

    def record(self, key: str) -> None:
        self._recent(key).append(self.clock())

    def take(self, key: str) -> int | None:
        """Record an event if allowed (None), else the seconds to wait."""
        wait = self.wait_seconds(key)
        if wait is None:
            self.record(key)
        return wait
