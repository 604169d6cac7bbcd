"""Refuse a JSON-RPC body the SDK cannot parse before the SDK sees it.

a2a-sdk 1.3.0 parses with `request.json()` and catches only `JSONDecodeError`: a body that is
not valid UTF-8 (`UnicodeDecodeError`) or nests deeper than Python's recursion limit
(`RecursionError`) falls through to its catch-all and is answered -32603 "internal error" with
the decoder's own message, and logged as a traceback. Such a body is the client's fault: this
middleware answers it as the protocol's -32700 parse error, then hands the SDK the body it read.
It sits inside `TeamGuard`, so only an authenticated team's body is read, and inside the
mount's body-size limit, so reading is bounded.
"""

from __future__ import annotations

from a2a.server.jsonrpc_models import JSONParseError
from a2a.server.request_handlers.response_helpers import build_error_response
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from justkernel.jsonsafe import loads_bounded


class JsonRpcBodyCheck:
    """Pure ASGI middleware for a JSON-RPC mount: POST bodies must be parseable JSON."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left: nobody to answer
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            loads_bounded(body)
        except ValueError as exc:
            error = JSONParseError(message=f"Parse error: {exc}")
            await JSONResponse(build_error_response(None, error))(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive channel that gives the body once, then the client's own messages."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
