"""Refuse a URL that holds a NUL character, before any handler runs.

No run id, team id, event kind or other name of the lab contains NUL, and PostgreSQL refuses
NUL in text outright ("invalid byte sequence for encoding UTF8: 0x00"): a `%00` in a path
parameter or a query filter went to the database and came back as a 500. One check here keeps
every route, present and future, on the same answer: 400, naming the problem.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

DETAIL = "the URL holds a NUL character (%00), which no id, kind or name of the lab contains"


class NoNulInUrl:
    """Pure ASGI middleware: 400 for a NUL in the decoded path or in the query string."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            query: bytes = scope.get("query_string", b"")
            if "\x00" in scope.get("path", "") or b"%00" in query or b"\x00" in query:
                response = JSONResponse({"error": "bad_request", "detail": DETAIL}, 400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
