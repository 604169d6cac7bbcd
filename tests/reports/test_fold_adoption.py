"""Adoption edges of the A2A graph (issue #16, 10): a team that fetched another team's
candidate (`fetch_candidate_source`) is drawn as an edge from the candidate's team to it."""

from __future__ import annotations

import json

from justkernel.events import NewEvent
from justkernel.lab import Lab
from justkernel.reports.fold import RunState, fold_into
from tests.web.synthetic import write_run


def _fetch(team: str, candidate_id: str, name: str = "fetch_candidate_source") -> NewEvent:
    args = json.dumps({"candidate_id": candidate_id})
    return NewEvent("tool.call", {"id": f"c-{team}", "name": name, "args": args}, team)


async def test_a_fetched_candidate_is_an_adoption_edge_from_its_team(sqlite_lab: Lab) -> None:
    events = [
        NewEvent("team.registered", {"display_name": t, "model_preset": "qwen"}, t)
        for t in ("team-001", "team-002", "team-003")
    ]
    events += [
        NewEvent("candidate.frozen", {"candidate_id": "cand-1", "cycles_sum": 9}, "team-001"),
        _fetch("team-002", "cand-1"),
        _fetch("team-002", "cand-1"),  # fetched twice: one edge, counted twice
        _fetch("team-003", "cand-1", name="read_file"),  # another tool: no edge
        _fetch("team-001", "cand-1"),  # its own candidate: no edge
        _fetch("team-003", "cand-unknown"),  # a candidate the log never froze: no edge
        NewEvent("tool.call", {"name": "fetch_candidate_source", "args": "{not json"}, "team-003"),
    ]
    run_id = await write_run(sqlite_lab, "adoption", events)
    run = await sqlite_lab.runs.get(run_id)
    state = await fold_into(sqlite_lab.events, RunState(run_id), run.last_seq)
    adoptions = [e for e in state.graph()["edges"] if e["type"] == "adoption"]
    assert [(e["source"], e["target"], e["count"]) for e in adoptions] == [
        ("team-001", "team-002", 2)
    ]
    assert adoptions[0]["summary"] == "fetched cand-1"
    assert state.malformed == 0
