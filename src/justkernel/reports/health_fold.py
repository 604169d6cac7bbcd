"""Whether a run can make progress, from its latest turn ends: the header says so in red when
every team's last turn failed (a sandbox that cannot be set up, a tool that always crashes),
instead of "dispatching" over a run that does nothing. A code the page translates, the
figures, and the last failure's own words (shown as text).

Part of `fold.RunState`, so a request costs nothing however long the log is (reading the
newest turn ends from the store scanned the whole run when it had few), and a replay's fold at
`?at=SEQ` has the health the run had at that event.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from justkernel.core.events.runs import TeamTurnEnd
from justkernel.core.reasons import Reason, ReasonCode, reason_of
from justkernel.events import Event

WINDOW = 50  # turn ends looked at, newest first, within the current dispatch
FAILING_AFTER = 3  # failed turns in a row (no success in between) before the run is failing
MAX_DETAIL = 300  # characters of the last failure's words
_EXCEPTION = re.compile(r"(?P<name>[A-Z]\w*(?:Error|Exception|Exit|Timeout)): ")

Failure = tuple[str, Reason]


def turn_failure(end: TeamTurnEnd) -> Failure | None:
    """(error name, reason) of a turn end that is a failure (a failed or timed-out turn, by
    its code, or in an older log by its words), None for a normal end."""
    reason = reason_of(end.reason_code, end.reason_params, end.detail)
    if reason is None:
        return None
    if reason.code == ReasonCode.TURN_TIMEOUT:
        return "turn_timeout", reason
    if reason.code != ReasonCode.TURN_FAILED:
        return None
    named = _EXCEPTION.match(str(reason.params.get("message", "")))
    return (named["name"] if named else str(reason.params.get("kind", "?"))), reason


@dataclass
class HealthFold:
    """The last `WINDOW` turn ends of the current dispatch, oldest first."""

    ends: deque[tuple[str | None, Failure | None]] = field(
        default_factory=lambda: deque(maxlen=WINDOW)
    )

    def dispatch_started(self) -> None:
        self.ends.clear()  # an earlier dispatch's turns say nothing of this one

    def turn_end(self, event: Event, p: TeamTurnEnd) -> None:
        self.ends.append((event.team, turn_failure(p)))

    def view(self) -> dict[str, Any]:
        """`{"state": "ok" | "failing" | "no_turns", ...}`; failing carries `code`
        ("turns_failing"), `failed_turns`, `teams`, `error` (the exception's name or the error
        kind), `detail` (the latest failure's message) and that failure's `reason_code` and
        `reason_params`."""
        latest: dict[str | None, Failure | None] = {}  # team -> its last turn's failure
        streak: list[Failure] = []
        broken = False
        for team, failure in reversed(self.ends):
            latest.setdefault(team, failure)
            if failure is None:
                broken = True
            elif not broken:
                streak.append(failure)
        if not latest:
            return {"state": "no_turns"}
        every_team_failing = all(f is not None for f in latest.values())
        if len(streak) < FAILING_AFTER or not every_team_failing:
            return {"state": "ok"}
        error, reason = streak[0]
        message = str(reason.params.get("message") or reason.text())
        return {
            "state": "failing",
            "code": "turns_failing",
            "failed_turns": len(streak),
            "teams": len(latest),
            "error": error[:80],
            "detail": message[:MAX_DETAIL],
            "reason_code": reason.code.value,
            "reason_params": _clipped(reason.params),
        }


def _clipped(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v[:MAX_DETAIL] if isinstance(v, str) else v for k, v in params.items()}
