"""Field-by-field validation answers: a refused form is `400 {"errors": {"field": "message"}}`,
so the page can put each message under the field it is about."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from justkernel.jsonsafe import loads_bounded
from justkernel.web.host_paths import hide_host_paths

MAX_BODY = 256 * 1024


class FormErrors(ValueError):
    """One or more fields are invalid; `errors` maps field name to message."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


class Conflict(RuntimeError):
    """The request is valid but not now (a run is already dispatching, say): 409."""


def field_errors(exc: ValidationError, prefix: str = "") -> dict[str, str]:
    errors: dict[str, str] = {}
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "form"
        message = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        errors.setdefault(prefix + loc, message)
    return errors


def parse_model(model: type[BaseModel], data: Any, prefix: str = "") -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise FormErrors(field_errors(exc, prefix)) from None


class BodyTooLarge(ValueError):
    """The body is over the limit: 413, answered before the rest of it is read."""


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The body, refused as soon as it is known to exceed `limit`: by its Content-Length
    before reading anything, else by counting while it streams in."""
    too_large = f"the request is over {limit // 1024} KiB"
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            raise FormErrors({"form": "the Content-Length header is not a number"})
        if int(declared) > limit:
            raise BodyTooLarge(too_large)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(too_large)
    return bytes(body)


async def json_body(request: Request) -> dict[str, Any]:
    raw = await read_body(request)
    try:
        data = loads_bounded(raw or b"{}")
    except ValueError as exc:
        raise FormErrors({"form": str(exc)}) from None
    if not isinstance(data, dict):
        raise FormErrors({"form": "expected a JSON object"})
    return data


async def form_errors(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, FormErrors)
    return JSONResponse({"error": "invalid", "errors": exc.errors}, status_code=400)


async def body_too_large(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "too_large", "detail": str(exc)}, status_code=413)


async def conflict(request: Request, exc: Exception) -> Response:
    """`the lab cannot run teams: hosts.toml: ...` carries the text of lower layers: no paths."""
    detail = hide_host_paths(str(exc), request.app.state.lab.settings)
    return JSONResponse({"error": "conflict", "detail": detail}, status_code=409)


exception_handlers = {FormErrors: form_errors, BodyTooLarge: body_too_large, Conflict: conflict}
