"""Whether a run can make progress, from its latest turn ends: the header says so in red when
every team's last turn failed (a sandbox that cannot be set up, a tool that always crashes),
instead of "dispatching" over a run that does nothing. A code the page translates, the
figures, and the last failure's own words (shown as text).

Read from the event log (newest first, `?at=SEQ` respected), so a replay shows the health the
run had at that event.
"""

from __future__ import annotations

import re
from typing import Any

from justkernel.core.events.runs import DispatchStarted, TeamTurnEnd
from justkernel.core.reasons import Reason, ReasonCode, reason_of
from justkernel.events.log import EventLog

WINDOW = 50  # turn ends looked at, newest first, within the current dispatch
FAILING_AFTER = 3  # failed turns in a row (no success in between) before the run is failing
MAX_DETAIL = 300  # characters of the last failure's words
_EXCEPTION = re.compile(r"(?P<name>[A-Z]\w*(?:Error|Exception|Exit|Timeout)): ")


def turn_failure(end: TeamTurnEnd) -> tuple[str, Reason] | None:
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


async def run_health(events: EventLog, run_id: str, at: int | None = None) -> dict[str, Any]:
    """`{"state": "ok" | "failing" | "no_turns", ...}`; failing carries `code`
    ("turns_failing"), `failed_turns`, `teams`, `error` (the exception's name or the error
    kind), `detail` (the latest failure's message) and that failure's `reason_code` and
    `reason_params`."""
    kinds = (TeamTurnEnd.KIND, DispatchStarted.KIND)
    before = at + 1 if at is not None else None
    page = await events.read(run_id, kinds=kinds, before=before, newest_first=True, limit=WINDOW)
    latest: dict[str | None, tuple[str, Reason] | None] = {}  # team -> its last turn's failure
    streak: list[tuple[str, Reason]] = []
    broken = False
    for event in page:
        if event.kind == DispatchStarted.KIND:
            break  # an earlier dispatch's turns say nothing of this one
        try:
            end = event.typed()
        except ValueError:  # a malformed turn end says nothing either way
            continue
        failure = turn_failure(end) if isinstance(end, TeamTurnEnd) else None
        latest.setdefault(event.team, failure)
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
