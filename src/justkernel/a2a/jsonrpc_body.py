"""Refuse a JSON-RPC body the SDK cannot parse before the SDK sees it.

a2a-sdk 1.3.0 parses with `request.json()` and catches only `JSONDecodeError`: a body that is
not valid UTF-8 (`UnicodeDecodeError`) or nests deeper than Python's recursion limit
(`RecursionError`) falls through to its catch-all and is answered -32603 "internal error" with
the decoder's own message, and logged as a traceback. Such a body is the client's fault: this
middleware answers it as the protocol's -32700 parse error, then hands the SDK the body it read.
A string holding NUL (`"\\u0000"`, legal JSON) is refused too, as invalid params (-32602): no
field of the lab can hold one (PostgreSQL refuses NUL in text), so it would only fail later,
inside the lab, as a database error.
It sits inside `TeamGuard`, so only an authenticated team's body is read, and inside the
mount's body-size limit, so reading is bounded.
"""

from __future__ import annotations

from a2a.server.jsonrpc_models import InvalidParamsError, JSONParseError, JSONRPCError
from a2a.server.request_handlers.response_helpers import build_error_response
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from justkernel.jsonsafe import loads_bounded

NUL_REFUSED = "a string holds NUL (\\u0000), which no field of the lab can store"


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
            call = loads_bounded(body)
        except ValueError as exc:
            error = JSONParseError(message=f"Parse error: {exc}")
            await _refuse(None, error, scope, receive, send)
            return
        if b"\\u0000" in body and _holds_nul(call):
            call_id = call.get("id") if isinstance(call, dict) else None
            error = InvalidParamsError(message=NUL_REFUSED)
            await _refuse(_plain_id(call_id), error, scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


async def _refuse(
    call_id: str | int | None, error: JSONRPCError, scope: Scope, receive: Receive, send: Send
) -> None:
    await JSONResponse(build_error_response(call_id, error))(scope, receive, send)


def _plain_id(value: object) -> str | int | None:
    """The call's id, when it is one JSON-RPC allows (string or integer, never a boolean)."""
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _holds_nul(value: object) -> bool:
    """Whether any string (key or value) of a parsed document holds NUL, without recursing."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if "\x00" in node:
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


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
