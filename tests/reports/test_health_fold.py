"""The run's health is part of the fold (issue #16, 5): the header's "no progress" comes from
the latest turn ends of the current dispatch, as of the replay position, without a read of the
log per request (which scanned all 50,000 events of a run with few turn ends)."""

from __future__ import annotations

from justkernel.events import NewEvent
from justkernel.lab import Lab
from justkernel.reports.fold import RunState, fold_into
from justkernel.reports.health_fold import WINDOW
from tests.web.synthetic import write_run

FAILED = {
    "status": "idle",
    "reason_code": "turn_failed",
    "reason_params": {
        "kind": "unknown",
        "message": "SandboxSetupError: bwrap failed",
        "seconds": 5,
    },
}
WORKED = {"status": "idle"}


def _end(team: str, payload: dict) -> NewEvent:  # type: ignore[type-arg]
    return NewEvent("team.turn_end", payload, team)


async def _health(lab: Lab, run_id: str, upto: int) -> dict:  # type: ignore[type-arg]
    return (await fold_into(lab.events, RunState(run_id), upto)).health.view()


async def test_failing_then_healthy_then_a_new_dispatch(sqlite_lab: Lab) -> None:
    events = [
        NewEvent("run.dispatch_started", {"seconds": None}),
        *(_end(team, FAILED) for team in ("team-001", "team-002", "team-001", "team-002")),
        *(
            NewEvent("tool.result", {"id": f"c{i}", "name": "read_file"}, "team-001")
            for i in range(30)
        ),
    ]
    run_id = await write_run(sqlite_lab, "health", events)
    run = await sqlite_lab.runs.get(run_id)
    failing = await _health(sqlite_lab, run_id, run.last_seq)
    assert failing["state"] == "failing" and failing["code"] == "turns_failing"
    assert (failing["failed_turns"], failing["teams"]) == (4, 2)
    assert failing["error"] == "SandboxSetupError" and "bwrap failed" in failing["detail"]
    # a replay position before the third failure: two in a row are not yet "failing"
    assert (await _health(sqlite_lab, run_id, 3))["state"] == "ok"
    assert (await _health(sqlite_lab, run_id, 1))["state"] == "no_turns"

    await sqlite_lab.events.append_many(run_id, [_end("team-001", WORKED)])
    run = await sqlite_lab.runs.get(run_id)
    assert (await _health(sqlite_lab, run_id, run.last_seq))["state"] == "ok"

    # a new dispatch forgets the old one's turns; only the newest WINDOW turn ends count
    await sqlite_lab.events.append_many(
        run_id,
        [
            NewEvent("run.dispatch_started", {"seconds": None}),
            *(_end("team-001", FAILED) for _ in range(WINDOW + 5)),
        ],
    )
    run = await sqlite_lab.runs.get(run_id)
    state = await fold_into(sqlite_lab.events, RunState(run_id), run.last_seq)
    assert state.health.view()["failed_turns"] == WINDOW
    assert state.health.view()["teams"] == 1
