"""The candidate lineage of a run: every frozen candidate with the one it was derived from.

`GET /api/runs/{id}/lineage` lists the nodes as columns and rows (compact for thousands of
candidates), folded from the run's events, so a replay shows the tree it recorded.
`GET /api/runs/{id}/lineage/{candidate_id}` is one node's panel: receipt, diff against its
parent, pipeline link, official points and the messages that carried it.

A parent is shown only when it names a candidate of this run frozen before the child
(`store.lineage.checked_parents`): an imported bundle cannot draw an edge to another run, a
later candidate or a cycle. Both take `?at=SEQ` like every dashboard view.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from justkernel.lab import Lab
from justkernel.reports.fold import RunState
from justkernel.store import Run
from justkernel.store.lineage import checked_parents
from justkernel.web.api import int_param
from justkernel.web.dashboard_api import cached, is_simulated
from justkernel.web.fast_json import FastJSONResponse
from justkernel.web.lineage_detail import diff_against, messages, points_summary, receipt
from justkernel.web.lineage_index import MentionIndex
from justkernel.web.pipeline_api import PipelineNotFound, PipelineViews
from justkernel.web.views import RunViews

COLUMNS = (
    "id", "team", "parent", "kind", "cycles", "status", "ts", "local_passed", "official"
)  # fmt: skip


class UnknownCandidate(LookupError):
    """The run has no frozen candidate of that id (404)."""


def frozen_rows(state: RunState) -> list[dict[str, Any]]:
    """The run's frozen candidates in the order they were frozen."""
    # not judger_rows(): its order weighs every review and result, a tenth of a second for
    # 2,000 candidates at each new event; the freezing order is all the tree needs
    rows = [c for c in state.candidates.values() if c.get("frozen") is not None]
    rows.sort(key=lambda c: c["frozen"]["seq"])
    return rows


def parents(rows: list[dict[str, Any]]) -> dict[str, tuple[str, str] | None]:
    nodes = [
        (c["candidate_id"], c["frozen"].get("parent_id"), c["frozen"].get("parent_kind"))
        for c in rows
    ]
    return checked_parents(nodes)


async def _state(request: Request, run: Run) -> tuple[RunState, int | None]:
    at = int_param(request, "at", None, 0, 2**62)
    views: RunViews = request.app.state.views
    return await views.state(run, at), at


def _row(cand: dict[str, Any], parent: tuple[str, str] | None) -> list[Any]:
    frozen = cand["frozen"]
    official = points_summary(cand["results"])
    return [
        cand["candidate_id"],
        cand["team"],
        parent[0] if parent else None,
        parent[1] if parent else None,
        frozen.get("cycles_sum"),
        cand["status"],
        frozen.get("ts"),
        frozen.get("local_passed"),
        None if official is None else [official["status"], official["passed"], official["points"]],
    ]


async def lineage(request: Request, run: Run) -> Response:
    state, at = await _state(request, run)
    rows = frozen_rows(state)
    checked = parents(rows)
    return FastJSONResponse(
        {
            "run_id": run.id,
            "simulated": is_simulated(run),
            "at": at,
            "last_seq": state.last_seq,
            "team_names": {t.id: t.display_name or t.id for t in state.teams.values()},
            "columns": list(COLUMNS),
            "rows": [_row(c, checked[c["candidate_id"]]) for c in rows],
            "dropped_parents": sum(
                1 for c in rows if c["frozen"].get("parent_id") and not checked[c["candidate_id"]]
            ),
        }
    )


def _mentions(request: Request) -> MentionIndex:
    """The app's one mention index, made on first use (the app factory stays as it is)."""
    index = getattr(request.app.state, "lineage_mentions", None)
    if index is None:
        index = request.app.state.lineage_mentions = MentionIndex(request.app.state.lab)
    return index


async def _pipeline(request: Request, run_id: str, blob: str | None) -> str | None:
    """The pipeline endpoint's URL for the receipt, when it has pipeline figures."""
    if blob is None:
        return None
    views: PipelineViews = request.app.state.pipelines
    try:
        if not await views.referenced(run_id, blob) or not await views.cases(blob):
            return None
    except PipelineNotFound:
        return None
    return f"/api/runs/{run_id}/receipts/{blob}/pipeline"


async def node(request: Request, run: Run) -> Response:
    state, at = await _state(request, run)
    wanted = request.path_params["candidate_id"]
    rows = frozen_rows(state)
    by_id = {c["candidate_id"]: c for c in rows}
    cand = by_id.get(wanted)
    if cand is None:
        raise UnknownCandidate(wanted)
    checked = parents(rows)
    parent = checked[wanted]
    lab: Lab = request.app.state.lab
    frozen = cand["frozen"]
    parent_seq = by_id[parent[0]]["frozen"]["seq"] if parent else None
    found = await receipt(lab, run.id, cand["team"], frozen.get("receipt_key"), at)
    children = [c for c, p in checked.items() if p is not None and p[0] == wanted]
    # the recorded claim is not shown raw: only the checked parent above
    shown = {k: v for k, v in frozen.items() if k not in ("parent_id", "parent_kind")}
    return FastJSONResponse(
        {
            "run_id": run.id,
            "simulated": is_simulated(run),
            "at": at,
            "candidate_id": wanted,
            "team": cand["team"],
            "status": cand["status"],
            "parent": parent[0] if parent else None,
            "parent_kind": parent[1] if parent else None,
            "children": children,
            "frozen": shown,
            "receipt": found,
            "pipeline_url": await _pipeline(request, run.id, (found or {}).get("blob")),
            "diff": await diff_against(lab, run.id, frozen["seq"], parent_seq),
            "official": {
                "summary": points_summary(cand["results"]),
                "results": cand["results"],
                "submissions": cand["submissions"],
            },
            "messages": await messages(lab, _mentions(request), run.id, wanted, at),
        }
    )


async def unknown_candidate(_request: Request, exc: Exception) -> Response:
    return FastJSONResponse(
        {"error": "not_found", "detail": f"no frozen candidate {exc} in this run"},
        status_code=404,
    )


routes = [
    Route("/api/runs/{run_id}/lineage", cached(lineage)),
    Route("/api/runs/{run_id}/lineage/{candidate_id}", cached(node)),
]

exception_handlers = {UnknownCandidate: unknown_candidate}
