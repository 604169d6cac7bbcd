"""`GET /api/runs/{run_id}/receipts/{sha}/pipeline?case=ID`: a receipt's pipeline view.

Answers the per-case pipeline figures of an ascendc-cpu receipt and, for one perf case, the
compact per-core, per-pipe timeline built from its trace blob (`reports.pipeline_timeline`).

Blobs hold every run's receipts, sources and logs, so nothing is served by hash alone: `sha`
must be a receipt blob that an event of THIS run names (`experiment.receipt` or
`a2a.evaluation`, key `blobs`), the case one of its perf cases with pipeline figures, and the
trace the one that receipt names for that case. Receipts and traces never change, so the
referenced set (per run, grown as its log grows) and each built timeline are cached.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from justkernel.core.pipeline_trace import NotATrace, load_trace
from justkernel.lab import Lab
from justkernel.reports.pipeline_timeline import MAX_SEGMENTS, build_timeline, receipt_cases
from justkernel.store import BlobStore
from justkernel.store.blobs import SHA256_RE

RECEIPT_KINDS = ("experiment.receipt", "a2a.evaluation")
MAX_TIMELINE_BYTES = 96 * 1024 * 1024  # built timelines kept (a 40-core one is ~6 MB)
MAX_RECEIPTS = 2000


class PipelineNotFound(LookupError):
    """No such receipt in this run, case in the receipt, or trace in this lab (404)."""


class PipelineBadRequest(ValueError):
    """A malformed receipt hash or case id (400)."""


@dataclass
class _RunRefs:
    last_seq: int = 0
    shas: set[str] = field(default_factory=set)


class PipelineViews:
    """The receipts each run names, parsed receipts, and built timelines, kept once each."""

    def __init__(self, lab: Lab) -> None:
        self._lab = lab
        self._refs: dict[str, _RunRefs] = {}
        self._receipts: OrderedDict[str, dict[str, dict[str, Any]]] = OrderedDict()
        self._timelines: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = asyncio.Lock()

    async def referenced(self, run_id: str, sha: str) -> bool:
        """Does an event of `run_id` name `sha` as a receipt blob? Reads only events after
        the ones already seen (the log is append-only)."""
        run = await self._lab.runs.get(run_id)
        refs = self._refs.setdefault(run_id, _RunRefs())
        while refs.last_seq < run.last_seq:
            page = await self._lab.events.read(
                run_id, after=refs.last_seq, before=run.last_seq + 1, kinds=RECEIPT_KINDS
            )
            for event in page:
                refs.shas.update(event.blob_refs())
            refs.last_seq = page[-1].seq if page else run.last_seq
        return sha in refs.shas

    def _read_receipt(self, sha: str) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self._lab.blobs.get(sha))
        except FileNotFoundError:
            raise PipelineNotFound(f"receipt {sha} is not in this lab's blob store") from None
        except ValueError:
            raise PipelineNotFound(f"blob {sha} is not a receipt") from None
        if not isinstance(data, dict) or "cycles" not in data:
            raise PipelineNotFound(f"blob {sha} is not a receipt")
        return receipt_cases(data)

    async def cases(self, sha: str) -> dict[str, dict[str, Any]]:
        found = self._receipts.get(sha)
        if found is None:
            found = await asyncio.to_thread(self._read_receipt, sha)
            self._receipts[sha] = found
            while len(self._receipts) > MAX_RECEIPTS:
                self._receipts.popitem(last=False)
        return found

    async def timeline(self, trace_sha: str) -> bytes:
        """The built timeline of a trace blob as JSON bytes (one build per trace)."""
        async with self._lock:  # one build at a time: a trace costs ~0.2 s of CPU
            cached = self._timelines.get(trace_sha)
            if cached is not None:
                self._timelines.move_to_end(trace_sha)
                return cached
            body = await asyncio.to_thread(_build, self._lab.blobs, trace_sha)
            self._timelines[trace_sha] = body
            self._bytes += len(body)
            while self._bytes > MAX_TIMELINE_BYTES and len(self._timelines) > 1:
                _, dropped = self._timelines.popitem(last=False)
                self._bytes -= len(dropped)
            return body


def _build(blobs: BlobStore, trace_sha: str) -> bytes:
    try:
        trace = load_trace(blobs.get(trace_sha))
        timeline = build_timeline(trace, MAX_SEGMENTS)
    except FileNotFoundError:
        raise PipelineNotFound(
            f"trace {trace_sha} is not in this lab's blob store (an export made before traces "
            "travelled with their receipts does not carry it)"
        ) from None
    except (NotATrace, ValueError) as exc:
        raise PipelineNotFound(f"trace {trace_sha} cannot be read: {exc}") from None
    return json.dumps(timeline, separators=(",", ":")).encode()


async def receipt_pipeline(request: Request) -> Response:
    """The receipt's perf cases with their figures, and the timeline of `case` (default: the
    first perf case); `timeline` is null, with `timeline_error` saying why, when the trace
    is not in this lab or cannot be read."""
    views: PipelineViews = request.app.state.pipelines
    run_id, sha = request.path_params["run_id"], request.path_params["sha"]
    if not SHA256_RE.match(sha):
        raise PipelineBadRequest("sha: expected a receipt's SHA-256 (64 lowercase hex digits)")
    case = request.query_params.get("case")
    if case is not None and not 0 < len(case) <= 128:
        raise PipelineBadRequest("case: expected a perf case id")
    if not await views.referenced(run_id, sha):
        raise PipelineNotFound(f"no event of run {run_id} names receipt {sha}")
    cases = await views.cases(sha)
    if not cases:
        raise PipelineNotFound(f"receipt {sha} has no pipeline figures (not an ascendc-cpu job)")
    if case is None:
        case = next(iter(cases))
    chosen = cases.get(case)
    if chosen is None:
        raise PipelineNotFound(f"receipt {sha} has no perf case {case!r} with pipeline figures")
    trace = chosen["trace_sha256"]
    head = {
        "run_id": run_id,
        "receipt": sha,
        "case": case,
        "cases": list(cases.values()),
        "pipeline": chosen["pipeline"],
        "max_segments": MAX_SEGMENTS,
    }
    if trace is None:
        return JSONResponse({**head, "timeline": None, "timeline_error": "no trace blob named"})
    try:
        body = await views.timeline(trace)
    except PipelineNotFound as exc:  # the figures are still the receipt's: show them
        return JSONResponse({**head, "timeline": None, "timeline_error": str(exc)})
    text = json.dumps(head, separators=(",", ":"))[:-1] + ',"timeline":' + body.decode() + "}"
    return Response(text, media_type="application/json")


async def not_found(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "not_found", "detail": str(exc)}, status_code=404)


async def bad_request(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "bad_request", "detail": str(exc)}, status_code=400)


routes = [Route("/api/runs/{run_id}/receipts/{sha}/pipeline", receipt_pipeline)]

exception_handlers = {PipelineNotFound: not_found, PipelineBadRequest: bad_request}
