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
from justkernel.events.log import EventLog

WINDOW = 50  # turn ends looked at, newest first, within the current dispatch
FAILING_AFTER = 3  # failed turns in a row (no success in between) before the run is failing
MAX_DETAIL = 300  # characters of the last failure's words
_FAILED = re.compile(r"turn failed \((?P<kind>[\w-]+)\): (?P<message>.*?)(?:; retry in [\d.]+ s)?")
_TIMED_OUT = re.compile(r"turn timed out after .*")
_EXCEPTION = re.compile(r"(?P<name>[A-Z]\w*(?:Error|Exception|Exit|Timeout)): ")


def turn_failure(detail: str | None) -> tuple[str, str] | None:
    """(error name, message) of a turn end that is a failure (the scheduler's "turn failed
    (kind): ..." or "turn timed out ..."), None for a normal end."""
    if not detail:
        return None
    if _TIMED_OUT.fullmatch(detail):
        return "turn_timeout", detail
    found = _FAILED.fullmatch(detail)
    if found is None:
        return None
    message = found["message"]
    named = _EXCEPTION.match(message)
    return (named["name"] if named else found["kind"]), message


async def run_health(events: EventLog, run_id: str, at: int | None = None) -> dict[str, Any]:
    """`{"state": "ok" | "failing" | "no_turns", ...}`; failing carries `code`
    ("turns_failing"), `failed_turns`, `teams`, `error` (the exception's name or the error
    kind) and `detail` (the latest failure's message)."""
    kinds = (TeamTurnEnd.KIND, DispatchStarted.KIND)
    before = at + 1 if at is not None else None
    page = await events.read(run_id, kinds=kinds, before=before, newest_first=True, limit=WINDOW)
    latest: dict[str | None, tuple[str, str] | None] = {}  # team -> its last turn's failure
    streak: list[tuple[str, str]] = []
    broken = False
    for event in page:
        if event.kind == DispatchStarted.KIND:
            break  # an earlier dispatch's turns say nothing of this one
        try:
            end = event.typed()
        except ValueError:  # a malformed turn end says nothing either way
            continue
        failure = turn_failure(end.detail if isinstance(end, TeamTurnEnd) else None)
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
    error, message = streak[0]
    return {
        "state": "failing",
        "code": "turns_failing",
        "failed_turns": len(streak),
        "teams": len(latest),
        "error": error[:80],
        "detail": message[:MAX_DETAIL],
    }
