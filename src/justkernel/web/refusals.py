"""A refusal the page translates: HTTP status, a `code` with its `params`, and the English
`detail` beside them (`{"error", "code", "params", "detail"}`). Raised by any route; the app
factory installs `exception_handlers`."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response


class Refused(Exception):
    """A refusal the page translates: HTTP `status`, `code` and its `params`, and `detail`."""

    def __init__(self, status: int, code: str, detail: str, **params: Any) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail, self.params = status, code, detail, params


async def refused(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refused)
    error = {404: "not_found", 409: "conflict"}.get(exc.status, "refused")
    body = {"error": error, "code": exc.code, "params": exc.params, "detail": exc.detail}
    return JSONResponse(body, status_code=exc.status)


exception_handlers = {Refused: refused}
