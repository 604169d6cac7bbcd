"""Field-by-field validation answers: a refused form is
`400 {"errors": {"field": "message"}, "codes": {"field": {"code": ..., params}}}`, so the page
can put each message under the field it is about, in the reader's language: `codes` says what
is wrong as a code with its parameters (the allowed range as numbers, the allowed values), never
as English text or a regex; `errors` keeps the English sentence for API clients and logs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from justkernel.jsonsafe import loads_bounded
from justkernel.web.host_paths import hide_host_paths

MAX_BODY = 256 * 1024
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"  # preset, host and team names


@dataclass(frozen=True)
class Problem:
    """What is wrong with one field: a code the dashboard translates (resources/web/js/i18n/
    errors.js), its parameters, and the same in English."""

    code: str
    message: str
    params: dict[str, Any] = field(default_factory=dict)

    def coded(self) -> dict[str, Any]:
        return {"code": self.code, **self.params}


# English sentences other modules raise as plain text, read back as their codes
_KNOWN_TEXT: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"unknown model preset '(?P<name>[^']*)'"), "unknown_preset"),
    (re.compile(r"choose a model preset"), "choose_preset"),
    (re.compile(r"unknown member role"), "unknown_role"),
    (re.compile(r"must be a host name or an IP address"), "host_address"),
    (re.compile(r"must start with http:// or https://"), "url_scheme"),
]


def _problem(value: Problem | str) -> Problem:
    if isinstance(value, Problem):
        return value
    for pattern, code in _KNOWN_TEXT:
        if match := pattern.search(value):
            return Problem(code, value, match.groupdict())
    return Problem("invalid", value)


class FormErrors(ValueError):
    """One or more fields are invalid; `errors` maps field name to its English message and
    `codes` to its code and parameters. A plain string is accepted (code `invalid`, or the
    code of a known sentence)."""

    def __init__(self, errors: Mapping[str, Problem | str]) -> None:
        problems = {name: _problem(value) for name, value in errors.items()}
        super().__init__("; ".join(f"{k}: {v.message}" for k, v in problems.items()))
        self.errors = {name: p.message for name, p in problems.items()}
        self.codes = {name: p.coded() for name, p in problems.items()}


class Conflict(RuntimeError):
    """The request is valid but not now (a run is already dispatching, say): 409."""


# pydantic's error types → our codes and the context keys they carry as parameters
_BOUNDS = {
    "less_than_equal": ("too_large", "le", "max"),
    "less_than": ("must_be_below", "lt", "limit"),
    "greater_than_equal": ("too_small", "ge", "min"),
    "greater_than": ("must_exceed", "gt", "limit"),
    "string_too_long": ("too_long", "max_length", "max"),
    "string_too_short": ("too_short", "min_length", "min"),
    "too_long": ("too_many", "max_length", "max"),
    "too_short": ("too_few", "min_length", "min"),
}
_PLAIN = {
    "missing": ("required", "required"),
    "extra_forbidden": ("unknown_field", "unknown field"),
    "string_pattern_mismatch": ("bad_format", "not in the allowed format"),
    "int_parsing": ("not_integer", "must be a whole number"),
    "int_type": ("not_integer", "must be a whole number"),
    "int_from_float": ("not_integer", "must be a whole number"),
    "float_parsing": ("not_number", "must be a number"),
    "float_type": ("not_number", "must be a number"),
    "bool_parsing": ("not_boolean", "must be true or false"),
    "bool_type": ("not_boolean", "must be true or false"),
    "string_type": ("not_text", "must be text"),
    "list_type": ("not_list", "must be a list"),
    "dict_type": ("not_object", "must be an object"),
    "model_type": ("not_object", "must be an object"),
}


def _allowed(expected: str) -> list[str]:
    """pydantic's "'a', 'b' or 'c'" as the list it names."""
    return re.findall(r"'([^']*)'", expected)


def pydantic_problem(err: Mapping[str, Any]) -> Problem:
    """One pydantic error as a code with parameters (a bound, the allowed values); pattern
    errors say "not in the allowed format", never the regex."""
    kind = str(err["type"])
    ctx = err.get("ctx") or {}
    if kind in _BOUNDS:
        code, key, param = _BOUNDS[kind]
        value = ctx.get(key)
        return Problem(code, str(err["msg"]), {param: value})
    if kind in ("literal_error", "enum"):
        allowed = _allowed(str(ctx.get("expected", "")))
        return Problem("one_of", f"must be one of {', '.join(allowed)}", {"allowed": allowed})
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == NAME_PATTERN:
        return Problem("bad_name", "letters, digits, _ . - only, at most 64", {"max": 64})
    if kind in _PLAIN:
        code, message = _PLAIN[kind]
        return Problem(code, message)
    if kind == "value_error":
        return _problem(str(err["msg"]).removeprefix("Value error, "))
    return Problem("invalid", str(err["msg"]))


def field_errors(exc: ValidationError, prefix: str = "") -> dict[str, Problem]:
    errors: dict[str, Problem] = {}
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "form"
        errors.setdefault(prefix + loc, pydantic_problem(err))
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
            raise FormErrors(
                {"form": Problem("bad_length", "the Content-Length header is not a number")}
            )
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
        raise FormErrors({"form": Problem("bad_json", str(exc))}) from None
    if not isinstance(data, dict):
        raise FormErrors({"form": Problem("not_object", "expected a JSON object")})
    return data


async def form_errors(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, FormErrors)
    body = {"error": "invalid", "errors": exc.errors, "codes": exc.codes}
    return JSONResponse(body, status_code=400)


async def body_too_large(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "too_large", "detail": str(exc)}, status_code=413)


async def conflict(request: Request, exc: Exception) -> Response:
    """`the lab cannot run teams: hosts.toml: ...` carries the text of lower layers: no paths."""
    detail = hide_host_paths(str(exc), request.app.state.lab.settings)
    return JSONResponse({"error": "conflict", "detail": detail}, status_code=409)


exception_handlers = {FormErrors: form_errors, BodyTooLarge: body_too_large, Conflict: conflict}
