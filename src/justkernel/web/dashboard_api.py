"""Read-only dashboard endpoints: teams, plans, the A2A graph, results, the Judger table and
throughput, all folded from the event log (`reports.fold`) and the blob store.

Every endpoint takes `?at=SEQ` so a replay scrubber sees the run as it was at that event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from justkernel import __version__
from justkernel.core.reasons import reason_view
from justkernel.lab import Lab
from justkernel.reports.fold import RunState
from justkernel.store import Run
from justkernel.web.api import int_param
from justkernel.web.fast_json import FastJSONResponse
from justkernel.web.response_cache import ResponseCache
from justkernel.web.throughput import ReceiptTimes, throughput
from justkernel.web.views import RunViews


class UnknownTeamView(LookupError):
    """The run has no events of that team."""


def is_simulated(run: Run) -> bool:
    return run.mode == "demo" or run.meta.get("simulated") is True


async def _state(request: Request, run: Run) -> tuple[RunState, int | None]:
    at = int_param(request, "at", None, 0, 2**62)
    views: RunViews = request.app.state.views
    return await views.state(run, at), at


def cached(build: Callable[[Request, Run], Awaitable[Response]]) -> Callable[..., Any]:
    """An endpoint whose answer depends only on the run's events and the query."""

    async def endpoint(request: Request) -> Response:
        lab: Lab = request.app.state.lab
        run = await lab.runs.get(request.path_params["run_id"])
        cache: ResponseCache = request.app.state.responses
        return await cache.answer(request, run.last_seq, lambda: build(request, run))

    return endpoint


def _head(run: Run, state: RunState, at: int | None) -> dict[str, Any]:
    return {
        "run_id": run.id,
        "mode": run.mode,
        "simulated": is_simulated(run),
        "at": at,
        "last_seq": state.last_seq,
        "last_ts": state.last_ts,
    }


async def info(request: Request) -> Response:
    """What this server can do, so the page shows only the controls that work."""
    return FastJSONResponse(
        {
            "version": __version__,
            "demo": bool(request.app.state.demo_only),
            "can_run": request.app.state.controller is not None,
            "can_demo": request.app.state.demo is not None,
        }
    )


def _dispatch_reason(state: RunState) -> dict[str, Any]:
    """Why dispatch stopped, as a code the page translates (older logs: read from the words)."""
    code, params = state.dispatch_reason_coded
    view = reason_view(code, params, state.dispatch_reason)
    return {
        "dispatch_reason_code": view["reason_code"],
        "dispatch_reason_params": view["reason_params"],
    }


async def view(request: Request, run: Run) -> Response:
    state, at = await _state(request, run)
    teams = state.team_list()
    return FastJSONResponse(
        {
            **_head(run, state, at),
            "run": run.to_dict(),
            "dispatch": state.dispatch,
            "dispatch_reason": state.dispatch_reason,
            **_dispatch_reason(state),
            "paused_providers": state.paused_providers,
            "health": state.health.view(),
            "teams": [t for t in teams if not t["exited"]],
            "exited": [t for t in teams if t["exited"]],
            "champion": state.champion,
        }
    )


async def team_plan(request: Request, run: Run) -> Response:
    state, at = await _state(request, run)
    team = state.teams.get(request.path_params["team_id"])
    if team is None:
        raise UnknownTeamView(request.path_params["team_id"])
    experiments = sorted(team.experiments.values(), key=lambda e: e["number"])
    return FastJSONResponse(
        {
            **_head(run, state, at),
            "team": team.summary(),
            "todos": team.todos,
            "todos_seq": team.todos_seq,
            "experiments": experiments,
            "official": team.official,
            "candidates": [state.candidates[c] for c in team.candidates if c in state.candidates],
        }
    )


async def graph(request: Request, run: Run) -> Response:
    state, at = await _state(request, run)
    return FastJSONResponse({**_head(run, state, at), **state.graph()})


async def results(request: Request, run: Run) -> Response:
    state, at = await _state(request, run)
    return FastJSONResponse(
        {
            **_head(run, state, at),
            "leaderboard": state.leaderboard(),
            "series": state.series(),
            "usage": state.usage(),
            "champion": state.champion,
        }
    )


async def judger(request: Request) -> Response:
    run = await request.app.state.lab.runs.get(request.path_params["run_id"])
    state, at = await _state(request, run)
    controls = request.app.state.judger
    settings = controls.settings() if controls is not None else None
    return FastJSONResponse(
        {
            **_head(run, state, at),
            "candidates": state.judger_rows(),
            "champion": state.champion,
            "settings": settings,
            "team_names": {t.id: t.display_name or t.id for t in state.teams.values()},
        }
    )


async def throughput_view(request: Request, run: Run) -> Response:
    state, at = await _state(request, run)
    times: ReceiptTimes = request.app.state.receipt_times
    return FastJSONResponse({**_head(run, state, at), **(await throughput(state, times))})


async def unknown_team(_request: Request, exc: Exception) -> Response:
    return FastJSONResponse({"error": "not_found", "detail": f"no team {exc}"}, status_code=404)


routes = [
    Route("/api/info", info),
    Route("/api/runs/{run_id}/view", cached(view)),
    Route("/api/runs/{run_id}/teams/{team_id}/plan", cached(team_plan)),
    Route("/api/runs/{run_id}/graph", cached(graph)),
    Route("/api/runs/{run_id}/results", cached(results)),
    Route("/api/runs/{run_id}/judger", judger),  # also shows settings, which are not events
    Route("/api/runs/{run_id}/throughput", cached(throughput_view)),
]

exception_handlers = {UnknownTeamView: unknown_team}
