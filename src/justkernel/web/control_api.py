"""Endpoints that change what runs: task settings, start, pause, resume, teams, a paused
provider's resume, Judger approvals and the demo switch. Each one is a thin call into
`RunController`, `JudgerControls` or `DemoPlayer`; none of them touches a team's internals."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from justkernel.web.config_api import refuse_in_demo
from justkernel.web.control import RunController
from justkernel.web.forms import Conflict, FormErrors, json_body
from justkernel.web.task_settings import validate_task

HUMAN = "dashboard"


def _controller(request: Request) -> RunController:
    refuse_in_demo(request)
    controller = request.app.state.controller
    if controller is None:
        raise Conflict("this server cannot drive runs")
    return controller


async def get_task(request: Request) -> Response:
    controller = request.app.state.controller
    tasks = request.app.state.tasks
    return JSONResponse(
        {
            "task": tasks.load().model_dump(mode="json") if tasks else None,
            "presets": sorted(controller.presets()) if controller else [],
            "status": controller.status() if controller else None,
            "default_toolchain": request.app.state.lab.settings.toolchain,
        }
    )


async def put_task(request: Request) -> Response:
    controller = _controller(request)
    task = validate_task(await json_body(request), controller.presets())
    request.app.state.tasks.save(task)
    return JSONResponse({"task": task.model_dump(mode="json")})


async def start_task(request: Request) -> Response:
    controller = _controller(request)
    body = await json_body(request)
    tasks = request.app.state.tasks
    task = validate_task(body, controller.presets()) if body else tasks.load()
    tasks.save(task)
    run = await controller.start(task)
    return JSONResponse({"run": run.to_dict(), "status": controller.status()})


async def pause_run(request: Request) -> Response:
    controller = _controller(request)
    await controller.pause(request.path_params["run_id"])
    return JSONResponse({"status": controller.status()})


async def resume_run(request: Request) -> Response:
    controller = _controller(request)
    await controller.resume(request.path_params["run_id"])
    return JSONResponse({"status": controller.status()})


def _members(body: dict[str, Any]) -> dict[str, str]:
    members = body.get("members") or {}
    if not isinstance(members, dict):
        raise FormErrors({"members": "expected role → model preset"})
    out = {}
    for role, model in members.items():
        if role not in ("analyst", "developer", "reviewer"):
            raise FormErrors({f"members.{role}": "unknown member role"})
        if model:
            out[role] = str(model)
    return out


async def add_team(request: Request) -> Response:
    controller = _controller(request)
    body = await json_body(request)
    model = str(body.get("model") or "")
    if not model:
        raise FormErrors({"model": "choose a model preset"})
    team = await controller.add_team(request.path_params["run_id"], model, _members(body))
    return JSONResponse({"team": team})


async def remove_team(request: Request) -> Response:
    controller = _controller(request)
    await controller.remove_team(request.path_params["run_id"], request.path_params["team_id"])
    return JSONResponse({"removed": request.path_params["team_id"]})


async def resume_provider(request: Request) -> Response:
    controller = _controller(request)
    run_id, provider = request.path_params["run_id"], request.path_params["provider"]
    teams = await controller.resume_provider(run_id, provider)
    return JSONResponse({"provider": provider, "resumed_teams": teams})


async def decide(request: Request) -> Response:
    refuse_in_demo(request)
    controls = request.app.state.judger
    if controls is None:
        raise Conflict("no Judger controls on this server")
    run_id, candidate = request.path_params["run_id"], request.path_params["candidate_id"]
    run = await request.app.state.lab.runs.get(run_id)
    if run.read_only:
        raise Conflict(f"run {run_id} is a read-only {run.mode}")
    action = request.path_params["action"]
    if action == "approve":
        event = await controls.approve(run_id, candidate, HUMAN)
    elif action == "reject":
        event = await controls.reject(run_id, candidate, HUMAN)
    else:
        raise FormErrors({"action": "approve or reject"})
    return JSONResponse({"event": event})


async def start_demo(request: Request) -> Response:
    player = request.app.state.demo
    if player is None:
        raise Conflict("this server has no demo session")
    run = await player.start()
    return JSONResponse({"run": run.to_dict()})


async def unknown_thing(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "not_found", "detail": str(exc)}, status_code=404)


routes = [
    Route("/api/config/task", get_task, methods=["GET"]),
    Route("/api/config/task", put_task, methods=["PUT"]),
    Route("/api/task/start", start_task, methods=["POST"]),
    Route("/api/runs/{run_id}/pause", pause_run, methods=["POST"]),
    Route("/api/runs/{run_id}/resume", resume_run, methods=["POST"]),
    Route("/api/runs/{run_id}/teams", add_team, methods=["POST"]),
    Route("/api/runs/{run_id}/teams/{team_id}", remove_team, methods=["DELETE"]),
    Route("/api/runs/{run_id}/providers/{provider}/resume", resume_provider, methods=["POST"]),
    Route("/api/runs/{run_id}/candidates/{candidate_id}/{action}", decide, methods=["POST"]),
    Route("/api/demo/start", start_demo, methods=["POST"]),
]
