"""Server-Sent Events stream of one run's events, resumable with `Last-Event-ID`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import StreamingResponse

from justkernel.events import EventLog
from justkernel.web.event_wire import wire_json

KEEPALIVE_SECONDS = 15.0


def resume_point(request: Request) -> int:
    """The sequence to resume after: `Last-Event-ID` wins over `?after=`; bad values mean 0."""
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        return 0


async def _frames(log: EventLog, run_id: str, after: int) -> AsyncIterator[str]:
    yield "retry: 2000\n\n"
    stream = log.subscribe(run_id, after=after).__aiter__()
    pending: asyncio.Task | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(stream.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_SECONDS)
            if not done:
                yield ": keepalive\n\n"
                continue
            event = pending.result()
            pending = None
            # No `event:` field: browsers deliver unnamed events to one onmessage handler,
            # and the kind is inside the data.
            yield f"id: {event.seq}\ndata: {wire_json(event)}\n\n"
    finally:
        if pending is not None:
            pending.cancel()
            # let the cancelled step finish before closing the generator it is running
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
        await stream.aclose()  # type: ignore[attr-defined]


def event_stream_response(log: EventLog, run_id: str, after: int) -> StreamingResponse:
    return StreamingResponse(
        _frames(log, run_id, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
