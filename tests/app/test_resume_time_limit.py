"""Resume keeps what is left of the run's time limit (issue #16, 3): before, the dashboard's
Resume dropped the limit and the run went on for ever. The time a run dispatched is read from
its log (each `run.dispatch_started` to its `run.dispatch_stopped`), on a real store."""

from __future__ import annotations

import json

from justkernel.app.session import dispatched_seconds, remaining_seconds
from justkernel.events.model import Event
from justkernel.lab import Lab


def _event(run_id: str, seq: int, kind: str, ts: str, payload: dict[str, object]) -> Event:
    return Event(run_id, seq, kind, None, ts, 1, json.dumps(payload))


async def test_a_resumed_run_gets_what_is_left_of_its_limit(lab: Lab) -> None:
    run = await lab.runs.create("paused twice")
    started, stopped = "run.dispatch_started", "run.dispatch_stopped"
    await lab.events.insert_verbatim(
        run.id,
        [
            _event(run.id, 1, started, "2026-12-02T10:00:00+00:00", {"seconds": 600}),
            _event(run.id, 2, "team.turn", "2026-12-02T10:01:00+00:00", {"state": "started"}),
            _event(run.id, 3, stopped, "2026-12-02T10:04:00+00:00", {"reason": "stopped"}),
            # paused for an hour: the run's clock stops with it
            _event(run.id, 4, started, "2026-12-02T11:04:00+00:00", {"seconds": 360}),
            _event(run.id, 5, stopped, "2026-12-02T11:05:30+00:00", {"reason": "stopped"}),
            # a start a crash never stopped counts nothing
            _event(run.id, 6, started, "2026-12-02T12:00:00+00:00", {"seconds": 270}),
        ],
    )
    used = await dispatched_seconds(lab.events, run.id)
    assert used == 4 * 60 + 90
    assert remaining_seconds(10, used) == 600 - 330
    assert remaining_seconds(5, used) == 0  # spent: the Judger still finishes its work
    assert remaining_seconds(None, used) is None  # no limit stays no limit
