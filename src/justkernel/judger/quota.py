"""The daily submission quota: days turn at 00:00 Asia/Shanghai, counted from the database, so
the quota holds across restarts. A limit of None is no local cap: the platform's own quota
answer (429 quota exhausted) is then the only stop, and pauses submitting until the day turns."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

CONTEST_TZ = ZoneInfo("Asia/Shanghai")
Clock = Callable[[], datetime]


def utc_clock() -> datetime:
    return datetime.now(UTC)


def quota_day(moment: datetime) -> str:
    """The contest day of a moment, as YYYY-MM-DD in Asia/Shanghai."""
    return moment.astimezone(CONTEST_TZ).date().isoformat()


def cap_reached(used: int, limit: int | None) -> bool:
    """Whether today's local cap is used up; None (the daily limit left empty) never is."""
    return limit is not None and used >= limit
