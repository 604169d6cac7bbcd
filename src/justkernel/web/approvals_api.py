"""Approvals of a supervised team over HTTP (issue #17, 4): the pending cards of a run, a
person's decision on one (approve, reject, approve and remember for the team), the remembered
grants and their revocation, and each team's approval mode.

Every call goes through the approval desk (`agents.approval_desk`), the one object the
middleware, the scheduler and the CLI use too, so a decision made here is the same row and the
same `approval.*` event as one made from the terminal; it is recorded `by: "dashboard"`.
A refusal names what is wrong as `{"code", "params"}` beside the English `detail` (the page
translates the code: resources/web/js/i18n/approvals.js): an unknown request, grant or team is
404, a request decided already 409, a body that is not a decision 400 with per-field codes.
The request guard and the session (or bearer token) apply as to every change.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from justkernel.agents.approval_desk import (
    REASON_LIMIT,
    ApprovalDesk,
    ApprovalRefused,
    UnknownApproval,
)
from justkernel.core.approvals import ApprovalMode
from justkernel.store import Run
from justkernel.store.teams import UnknownTeam
from justkernel.web import refusals
from justkernel.web.config_api import refuse_in_demo
from justkernel.web.forms import json_body, parse_model
from justkernel.web.refusals import Refused

HUMAN = "dashboard"
DECISIONS = {"approve": (True, False), "reject": (False, False), "remember": (True, True)}


class DecisionForm(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "reject", "remember"]
    reason: str | None = Field(default=None, max_length=REASON_LIMIT)


class ModeForm(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: ApprovalMode


def _desk(request: Request) -> ApprovalDesk:
    """The app's one desk, made on first use (its cache is this process's own)."""
    desk = getattr(request.app.state, "approval_desk", None)
    if desk is None:
        desk = request.app.state.approval_desk = ApprovalDesk.of(request.app.state.lab)
    return desk


async def _run(request: Request) -> Run:
    return await request.app.state.lab.runs.get(request.path_params["run_id"])


async def _changeable(request: Request) -> Run:
    """The run, when a person may decide in it: a live run of this lab (not the demo, a
    replay or an imported bundle, whose approvals are history)."""
    refuse_in_demo(request, "approvals are decided only in a live run")
    run = await _run(request)
    if run.read_only:
        raise Refused(409, "read_only_run", f"run {run.id} is a read-only {run.mode}", run=run.id)
    if run.mode != "live":
        raise Refused(409, "not_live", f"run {run.id} is a {run.mode} run", run=run.id)
    return run


async def _team(request: Request, run: Run, team_id: str) -> None:
    try:
        await request.app.state.lab.teams.get(run.id, team_id)
    except UnknownTeam:
        raise Refused(
            404, "unknown_team", f"no team {team_id!r} in run {run.id}", team=team_id
        ) from None


async def pending(request: Request) -> Response:
    """The run's requests waiting for a person, oldest first (`?team=` for one team's)."""
    run = await _run(request)
    team = request.query_params.get("team") or None
    found = await _desk(request).pending(run.id, team)
    return JSONResponse({"run_id": run.id, "approvals": [r.to_dict() for r in found]})


async def decide(request: Request) -> Response:
    run = await _changeable(request)
    form = parse_model(DecisionForm, await json_body(request))
    request_id = request.path_params["request_id"]
    approve, remember = DECISIONS[form.decision]
    desk = _desk(request)
    reason = (form.reason or "").strip() or None
    try:
        decided = await desk.decide(
            request_id, approve, remember, by=HUMAN, reason=reason, run_id=run.id
        )
    except UnknownApproval:
        raise Refused(
            404,
            "unknown_approval",
            f"no approval request {request_id!r} in run {run.id}",
            id=request_id,
        ) from None
    except ApprovalRefused as exc:
        current = await desk.get(request_id, run.id)
        raise Refused(
            409,
            "already_decided",
            str(exc),
            id=request_id,
            decided=current.status.value,
            by=current.decided_by,
        ) from None
    return JSONResponse({"approval": decided.to_dict()})


async def grants(request: Request) -> Response:
    run = await _run(request)
    team = request.query_params.get("team") or None
    found = await _desk(request).grants(run.id, team)
    return JSONResponse({"run_id": run.id, "grants": [g.to_dict() for g in found]})


async def revoke(request: Request) -> Response:
    run = await _changeable(request)
    grant_id = request.path_params["grant_id"]
    try:
        grant = await _desk(request).revoke(grant_id, HUMAN, run_id=run.id)
    except UnknownApproval:
        raise Refused(
            404, "unknown_grant", f"no active grant {grant_id!r} in run {run.id}", id=grant_id
        ) from None
    return JSONResponse({"revoked": grant.to_dict()})


async def modes(request: Request) -> Response:
    """Each team's mode as it applies (its own, else the run's default, else auto)."""
    run = await _run(request)
    desk = _desk(request)
    teams = await request.app.state.lab.teams.list(run.id, include_exited=False)
    default = await desk.mode(run.id)
    own = await desk.modes(run.id)
    return JSONResponse(
        {
            "run_id": run.id,
            "default": default.value,
            "modes": {t.id: own.get(t.id, default).value for t in teams},
            "choices": [m.value for m in ApprovalMode],
        }
    )


async def get_mode(request: Request) -> Response:
    run = await _run(request)
    team_id = request.path_params["team_id"]
    await _team(request, run, team_id)
    mode = await _desk(request).mode(run.id, team_id)
    return JSONResponse({"run_id": run.id, "team": team_id, "mode": mode.value})


async def put_mode(request: Request) -> Response:
    run = await _changeable(request)
    team_id = request.path_params["team_id"]
    form = parse_model(ModeForm, await json_body(request))
    await _team(request, run, team_id)
    mode = await _desk(request).set_mode(run.id, team_id, form.mode, by=HUMAN)
    return JSONResponse({"run_id": run.id, "team": team_id, "mode": mode.value})


APPROVALS = "/api/runs/{run_id}/approvals"
routes = [
    Route(APPROVALS, pending, methods=["GET"]),
    Route(f"{APPROVALS}/grants", grants, methods=["GET"]),
    Route(f"{APPROVALS}/grants/{{grant_id}}", revoke, methods=["DELETE"]),
    Route(f"{APPROVALS}/modes", modes, methods=["GET"]),
    Route(f"{APPROVALS}/{{request_id}}/decide", decide, methods=["POST"]),
    Route("/api/runs/{run_id}/teams/{team_id}/approval-mode", get_mode, methods=["GET"]),
    Route("/api/runs/{run_id}/teams/{team_id}/approval-mode", put_mode, methods=["PUT"]),
]

exception_handlers = refusals.exception_handlers
