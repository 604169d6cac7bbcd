"""JSON API under `/api/`: runs and their events. Reads the store and the log, nothing else."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from justkernel.lab import Lab
from justkernel.store import UnknownRun
from justkernel.web.event_wire import wire_json
from justkernel.web.sse import event_stream_response, resume_point

MAX_PAGE = 1000


class BadRequest(ValueError):
    """A query parameter is invalid; answered as 400 with the parameter named."""


def int_param(request: Request, name: str, default: int | None, lo: int, hi: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise BadRequest(f"{name}: expected an integer, got {raw!r}") from exc
    if not lo <= value <= hi:
        raise BadRequest(f"{name}: must be between {lo} and {hi}")
    return value


def _lab(request: Request) -> Lab:
    return request.app.state.lab


async def list_runs(request: Request) -> Response:
    runs = await _lab(request).runs.list()
    return JSONResponse({"runs": [r.to_dict() for r in runs]})


async def get_run(request: Request) -> Response:
    run = await _lab(request).runs.get(request.path_params["run_id"])
    return JSONResponse(run.to_dict())


async def list_events(request: Request) -> Response:
    """A page of events: `after`, `before`, `limit`, `kind` (repeatable), `team`, `order`."""
    lab = _lab(request)
    run = await lab.runs.get(request.path_params["run_id"])
    cache = getattr(request.app.state, "responses", None)
    if cache is None:
        return await _events_page(request, lab, run.id, run.last_seq)
    return await cache.answer(
        request, run.last_seq, lambda: _events_page(request, lab, run.id, run.last_seq)
    )


async def _events_page(request: Request, lab: Lab, run_id: str, last_seq: int) -> Response:
    """Bounded by `last_seq`, so the page is exactly the answer cached under it."""
    after = int_param(request, "after", 0, 0, 2**62) or 0
    before = min(int_param(request, "before", None, 1, 2**62) or 2**62, last_seq + 1)
    limit = int_param(request, "limit", 200, 1, MAX_PAGE) or 200
    order = request.query_params.get("order", "asc")
    if order not in ("asc", "desc"):
        raise BadRequest("order: must be asc or desc")
    kinds = request.query_params.getlist("kind") or None
    team = request.query_params.get("team")
    events = await lab.events.read(
        run_id,
        after=after,
        before=before,
        limit=limit,
        kinds=kinds,
        team=team,
        newest_first=order == "desc",
    )
    body = "[" + ",".join(wire_json(e) for e in events) + "]"
    return Response(f'{{"events":{body}}}', media_type="application/json")


async def stream_events(request: Request) -> Response:
    lab = _lab(request)
    run_id = request.path_params["run_id"]
    await lab.runs.get(run_id)
    return event_stream_response(lab.events, run_id, resume_point(request))


async def unknown_run(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "not_found", "detail": f"no run {exc}"}, status_code=404)


async def bad_request(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "bad_request", "detail": str(exc)}, status_code=400)


routes = [
    Route("/api/runs", list_runs),
    Route("/api/runs/{run_id}", get_run),
    Route("/api/runs/{run_id}/events", list_events),
    Route("/api/runs/{run_id}/stream", stream_events),
]

exception_handlers = {UnknownRun: unknown_run, BadRequest: bad_request}
