"""The fold behind every dashboard panel and the report, and the API around it, on a real
SQLite store through the ASGI app (no browser): state as of any event, missing figures kept
missing, cached answers that never go stale, and field-by-field refusals.

The tests are plain functions running their coroutine in a thread of its own: once the
session's sync Playwright owns the main thread's event loop, pytest-asyncio cannot run there.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from justkernel.events import NewEvent
from justkernel.lab import Lab, open_lab
from justkernel.reports.fold import RunState, fold_into
from justkernel.settings.config import Settings
from justkernel.web.app import create_app
from justkernel.web.auth import AuthState
from justkernel.web.demo import DemoPlayer
from justkernel.web.forms import FormErrors
from justkernel.web.task_settings import validate_task
from tests.web.synthetic import judger_events, write_run

TOKEN = "t" * 32


Body = Callable[[Lab, httpx.AsyncClient], Awaitable[Any]]


def with_app(settings: Settings, body: Body, *, demo: bool = False) -> None:
    """Run `body` with a lab on a real SQLite file and an API client on the real app."""

    async def go() -> None:
        lab = await open_lab(settings)
        try:
            auth = AuthState.create(
                lab.settings.config_dir, lab.settings.resolved_data_dir, api_token=TOKEN
            )
            player = DemoPlayer(lab, speed=1000) if demo else None
            transport = httpx.ASGITransport(app=create_app(lab, auth, demo=player))
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx.AsyncClient(
                transport=transport, base_url=f"http://127.0.0.1:{settings.port}", headers=headers
            ) as client:
                await body(lab, client)
            if player is not None:
                await player.stop()
        finally:
            await lab.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, go()).result()


def test_fold_tracks_candidates_usage_and_best_cycles(settings: Settings) -> None:
    with_app(settings, _fold_tracks_candidates)


async def _fold_tracks_candidates(lab: Lab, _client: httpx.AsyncClient) -> None:
    run_id = await write_run(lab, "fold", judger_events("cand-a", "cand-b"))
    run = await lab.runs.get(run_id)
    state = await fold_into(lab.events, RunState(run_id), run.last_seq)
    assert state.last_seq == run.last_seq
    team = state.teams["team-001"]
    assert (team.baseline_cycles, team.best_cycles) == (1_800_000_000, 520_000_000)
    assert [p[2] for p in team.series] == [1_800_000_000, 520_000_000]
    assert team.usage.reasoning_tokens is None  # not reported: missing, not 0
    assert team.usage.cost_usd is None
    assert team.usage.input_tokens == 1200
    assert state.candidates["cand-a"]["status"] == "official_pass"
    assert state.candidates["cand-b"]["status"] == "awaiting_approval"
    assert state.champion is not None and state.champion["submission_id"] == "sub-0001"
    assert state.teams["team-002"].summary()["best_official_us"] is None
    edges = {(e["source"], e["target"], e["type"]) for e in state.graph()["edges"]}
    assert ("team-001", "judger", "candidate") in edges  # a frozen candidate goes to the Judger
    assert ("judger", "team-002", "feedback") in edges


def test_the_graph_shows_each_official_result_once_per_team(settings: Settings) -> None:
    with_app(settings, _each_result_once_per_team)


async def _each_result_once_per_team(lab: Lab, _client: httpx.AsyncClient) -> None:
    """The Judger posts a result to its submitter and a public copy that skips it (board.py
    `excluding`); a broadcast that reaches nobody (one team alone) draws no edge at all."""
    registered = [
        NewEvent("team.registered", {"display_name": n, "model_preset": "qwen"}, n)
        for n in ("team-001", "team-002")
    ]
    results = [
        NewEvent(
            "a2a.message",
            {"message_id": "own", "to": "team-001", "recipients": ["team-001"], "type": "feedback"},
        ),
        NewEvent(
            "a2a.message",
            {"message_id": "news", "to": "all", "recipients": ["team-002"], "type": "feedback"},
        ),
        NewEvent(
            "a2a.message",
            {"message_id": "nobody", "to": "all", "recipients": [], "type": "feedback"},
        ),
    ]
    run_id = await write_run(lab, "once", registered + results)
    run = await lab.runs.get(run_id)
    state = await fold_into(lab.events, RunState(run_id), run.last_seq)
    counts = {
        e["target"]: e["count"]
        for e in state.graph()["edges"]
        if (e["source"], e["type"]) == ("judger", "feedback")
    }
    assert counts == {"team-001": 1, "team-002": 1}


def test_views_answer_as_of_any_event_and_never_stale(settings: Settings) -> None:
    with_app(settings, _views_as_of_any_event)


async def _views_as_of_any_event(lab: Lab, client: httpx.AsyncClient) -> None:
    run_id = await write_run(lab, "at", judger_events("cand-a", "cand-b"))
    full = (await client.get(f"/api/runs/{run_id}/results")).json()
    best = {r["id"]: r["best_cycles"] for r in full["leaderboard"]}
    assert best == {"team-001": 520_000_000, "team-002": 610_000_000}
    early = (await client.get(f"/api/runs/{run_id}/results", params={"at": 5})).json()
    assert {r["id"]: r["best_cycles"] for r in early["leaderboard"]} == {
        "team-001": 1_800_000_000,
        "team-002": None,
    }
    # moving back and forth gives the same answers
    again = (await client.get(f"/api/runs/{run_id}/results", params={"at": 5})).json()
    assert again == early
    # a new event changes the answer at once (the cache key is the run's last event)
    await lab.events.append(run_id, "team.exited", {"reason": "test"}, team="team-002")
    view = (await client.get(f"/api/runs/{run_id}/view")).json()
    assert [t["id"] for t in view["exited"]] == ["team-002"]
    assert [t["id"] for t in view["teams"]] == ["team-001"]
    page = (await client.get(f"/api/runs/{run_id}/events", params={"order": "desc"})).json()
    assert page["events"][0]["kind"] == "team.exited"


def test_model_form_is_refused_field_by_field(settings: Settings) -> None:
    with_app(settings, _model_form_refused)


async def _model_form_refused(_lab: Lab, client: httpx.AsyncClient) -> None:
    answer = await client.post(
        "/api/config/models",
        json={"name": "q", "provider": "qwen", "model": "qwen3.8-flash", "max_output_tokens": 0},
    )
    assert answer.status_code == 400
    assert set(answer.json()["errors"]) == {"max_output_tokens"}
    answer = await client.post(
        "/api/config/models", json={"name": "q", "provider": "qwen", "model": "qwen3.8-flash"}
    )
    errors = answer.json()["errors"]
    assert set(errors) == {"base_url", "api_key"}
    answer = await client.post(
        "/api/config/models",
        json={"name": "o", "provider": "offline", "model": "x", "api_key": "sk-abcdefgh"},
    )
    assert answer.json()["errors"] == {"api_key": "the offline model takes no key"}
    with pytest.raises(FormErrors) as refused:
        validate_task({"mode": "solo", "teams": [{"model": "gpt-9"}]}, {"offline"})
    assert set(refused.value.errors) == {"mode"}
    with pytest.raises(FormErrors) as refused:
        validate_task({"mode": "single", "teams": [{"model": "gpt-9"}, {}]}, {"offline"})
    assert set(refused.value.errors) == {"teams", "teams.0.model"}


def test_bundle_import_refuses_a_bad_file_with_a_reason(settings: Settings) -> None:
    with_app(settings, _bad_bundle)


async def _bad_bundle(_lab: Lab, client: httpx.AsyncClient) -> None:
    answer = await client.post(
        "/api/import",
        content=b"not a zip at all",
        headers={"Content-Type": "application/octet-stream"},
    )
    assert answer.status_code == 400
    assert "not a JustKernel bundle" in answer.json()["detail"]


def test_unknown_team_and_run_are_404(settings: Settings) -> None:
    with_app(settings, _unknown_is_404)


async def _unknown_is_404(lab: Lab, client: httpx.AsyncClient) -> None:
    run_id = await write_run(lab, "x", [NewEvent("team.registered", {}, "team-001")])
    assert (await client.get(f"/api/runs/{run_id}/teams/team-999/plan")).status_code == 404
    assert (await client.get("/api/runs/nope/view")).status_code == 404


def test_the_full_servers_demo_switch_plays_a_simulated_run(settings: Settings) -> None:
    with_app(settings, _demo_switch, demo=True)


async def _demo_switch(lab: Lab, client: httpx.AsyncClient) -> None:
    info = (await client.get("/api/info")).json()
    assert info["can_demo"] and not info["demo"]
    started = (await client.post("/api/demo/start")).json()["run"]
    assert started["mode"] == "demo" and started["meta"]["simulated"] is True
    total = started["meta"]["event_count"]
    for _ in range(600):
        if (await lab.runs.get(started["id"])).last_seq == total:
            break
        await asyncio.sleep(0.05)
    played = [e async for e in lab.events.iter_all(started["id"])]
    assert len(played) == total
    assert {e.kind for e in played} >= {"team.registered", "experiment.receipt", "a2a.message"}
    view = (await client.get(f"/api/runs/{started['id']}/view")).json()
    assert view["simulated"] is True and len(view["teams"]) >= 2


def test_usage_names_members_on_their_own_models_and_the_judgers_reviewer(
    settings: Settings,
) -> None:
    def response(team: str, provider: str, member: str | None, total: int) -> NewEvent:
        usage = {"input_tokens": total - 10, "output_tokens": 10, "total": total}
        payload = {"provider": provider, "member": member, "usage": usage}
        return NewEvent("model.response", payload, team)

    async def body(lab: Lab, _client: httpx.AsyncClient) -> None:
        events = [
            NewEvent("team.registered", {"display_name": "Qwen-001"}, "team-001"),
            response("team-001", "qwen", None, 100),
            response("team-001", "deepseek", "analyst", 40),
            response("team-001", "deepseek", "analyst", 60),
            NewEvent("judger.model_review", {"verdict": "accept", "usage": {"total": 7}}),
            NewEvent("judger.model_review", {"verdict": "unavailable", "usage": None}),
        ]
        run_id = await write_run(lab, "members", events)
        run = await lab.runs.get(run_id)
        usage = (await fold_into(lab.events, RunState(run_id), run.last_seq)).usage()
        assert [(u["team"], u["calls"], u["total"]) for u in usage["teams"]] == [
            ("team-001", 3, 200)  # the team's row counts its members too
        ]
        assert [(u["label"], u["member"], u["calls"], u["total"]) for u in usage["members"]] == [
            ("Qwen-001", "analyst", 2, 100)
        ]
        assert usage["judger"]["calls"] == 1 and usage["judger"]["total"] == 7

    with_app(settings, body)
