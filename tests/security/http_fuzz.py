"""The machinery of the HTTP fuzz (no tests here; see test_http_fuzz.py).

Routes come from each Starlette app's own route table, so a route added later is fuzzed
without touching this file. Requests are built by hypothesis strategies: path parameters with
plausible and hostile values, random query strings, bodies of every shape an attacker can send
(random JSON, JSON close to the real schemas with mutated types, deep nesting, invalid UTF-8,
over-limit sizes), wrong content types, with and without credentials. Every answer must be
below 500 and carry no traceback and no exception class name.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import functools
import io
import json
import re
import socket
import threading
import zipfile
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from hypothesis import strategies as st
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp

T = TypeVar("T")
JSONRPC_INTERNAL_ERROR = -32603
PARAM_RE = re.compile(r"{(\w+)(?::\w+)?}")
AUTHENTICATED = "ok:"  # credential labels that let a request in start with this
EVERY_METHOD = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")


# -- an event loop of its own ----------------------------------------------------------------
class LoopThread:
    """One asyncio loop in a thread of its own: the apps live there for a whole module, and
    hypothesis (synchronous) hands it one request at a time. Sync Playwright may own the main
    thread's loop in the same session, so nothing here uses it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 300.0) -> T:
        """The coroutine's result; `timeout` only turns a hang into a named failure."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Cancel what the apps left running (SSE watchers, playbacks), then stop."""
        self.run(_cancel_others())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()


async def _cancel_others() -> None:
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


# -- routes ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Endpoint:
    """One path of an app's route table, with the methods it answers."""

    path: str
    methods: tuple[str, ...]

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(PARAM_RE.findall(self.path))

    @property
    def takes_body(self) -> bool:
        return any(m in ("POST", "PUT", "PATCH") for m in self.methods)


def endpoints(routes: Sequence[BaseRoute], prefix: str = "") -> list[Endpoint]:
    """Every route of the table, mounts walked; a mounted app without routes (static files)
    is one endpoint whose rest of the path is a parameter."""
    found: list[Endpoint] = []
    for route in routes:
        if isinstance(route, Route):
            methods = tuple(sorted(route.methods or {"GET", "HEAD"}))
            found.append(Endpoint(prefix + route.path, methods))
        elif isinstance(route, Mount):
            if route.routes:
                found += endpoints(route.routes, prefix + route.path)
            else:
                found.append(Endpoint(prefix + route.path + "/{static_path}", ("GET", "HEAD")))
    merged: dict[str, set[str]] = {}
    for item in found:
        merged.setdefault(item.path, set()).update(item.methods)
    return [Endpoint(path, tuple(sorted(m))) for path, m in merged.items()]


def wire(value: str) -> str:
    """Percent-encoded as sent: dots too (so `..` reaches the app), and a lone surrogate as
    the invalid UTF-8 bytes a raw client would send."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="").replace(".", "%2E")


def fill(path: str, values: dict[str, str]) -> str:
    """The path with each parameter encoded by `wire`."""
    return PARAM_RE.sub(lambda m: wire(values[m.group(1)]), path)


# -- values ------------------------------------------------------------------------------------
HOSTILE_TEXT = (
    "..",
    "../../../../etc/passwd",
    "..%2F..%2Fetc",
    "a" * 5000,
    "ü💥名前",
    "a\x00b",
    "\x00",
    " ",
    "%",
    "%00",
    "\ud800",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "$(touch /tmp/pwned)",
    "op_kernel/.git/config",
    "-1",
    "9" * 400,
    "NaN",
    "null",
    "team-000",
    "run-00000000-000000-000000",
)
QUERY_NAMES = ("after", "before", "limit", "order", "kind", "team", "at", "name", "token")
QUERY_VALUES = ("0", "1", "-1", "2", "200", "1001", "9" * 40, "1e9", "nan", "asc", "desc", "x")


def json_scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=40),
        st.sampled_from(HOSTILE_TEXT),
    )


def json_values(max_leaves: int = 30) -> st.SearchStrategy[Any]:
    return st.recursive(
        json_scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=6),
            st.dictionaries(
                st.text(max_size=12) | st.sampled_from(HOSTILE_TEXT), inner, max_size=6
            ),
        ),
        max_leaves=max_leaves,
    )


def nested(depth: int, kind: str) -> bytes:
    """JSON nested `depth` levels deep, built as text (never as a Python object)."""
    if kind == "array":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


@dataclass(frozen=True)
class Schema:
    """Field names a route reads, each with plausible values; the fuzz mixes them with values
    of the wrong type and with fields the route does not know."""

    fields: dict[str, tuple[Any, ...]]
    wrap: Callable[[dict[str, Any]], Any] = lambda body: body


def near_schema(schema: Schema) -> st.SearchStrategy[Any]:
    names = sorted(schema.fields)

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        chosen = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True))
        body: dict[str, Any] = {}
        for name in chosen:
            plausible = schema.fields[name]
            pick = draw(st.integers(0, 4))
            if plausible and pick >= 2:
                body[name] = draw(st.sampled_from(plausible))
            elif pick == 1:  # the field's type, hostile content
                body[name] = draw(st.sampled_from(HOSTILE_TEXT))
            else:
                body[name] = draw(json_values(10))
        if draw(st.integers(0, 5)) == 0:
            body[draw(st.text(min_size=1, max_size=10))] = draw(json_scalars())
        return schema.wrap(body)

    return build()


# -- requests ----------------------------------------------------------------------------------
@dataclass
class Target:
    """An app under fuzz: its client, its routes, the values that mean something to it."""

    name: str
    client: httpx.AsyncClient
    routes: list[Endpoint]
    credentials: dict[str, dict[str, str]]  # label -> headers that authenticate (or not)
    values: Callable[[str], Sequence[str]]  # path parameter -> plausible values
    schemas: dict[str, Schema] = field(default_factory=dict)  # "METHOD path" -> schema
    raw_bodies: dict[str, st.SearchStrategy[bytes]] = field(default_factory=dict)
    app: ASGIApp | None = None  # for the routes that stream forever (see `first_frame`)
    sent: Counter[int] = field(default_factory=Counter)  # status -> requests
    hit: Counter[str] = field(default_factory=Counter)  # route path -> requests


CONTENT_TYPES = (
    "application/json",
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/zip",
    "application/octet-stream",
    "application/json; charset=latin-1",
    "",
)


@dataclass(frozen=True)
class Fuzzed:
    method: str
    path: str
    params: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes | None
    route: str = ""

    @property
    def url(self) -> str:
        """Path and query, encoded here (httpx would refuse what is not valid Unicode)."""
        query = "&".join(f"{wire(k)}={wire(v)}" for k, v in self.params)
        return self.path + ("?" + query if query else "")

    def describe(self) -> str:
        size = "no body" if self.body is None else f"{len(self.body)} bytes: {self.body[:120]!r}"
        return f"{self.method} {self.path[:200]} {self.params[:4]} {size}"


def _body(draw: st.DrawFn, target: Target, method: str, route: Endpoint) -> bytes | None:
    key = f"{method} {route.path}"
    kinds = ["none", "random", "schema", "schema", "schema", "deep", "binary", "big", "raw"]
    if key in target.raw_bodies:
        kinds += ["raw", "raw", "raw"]  # a route's own body format, more often
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "raw" and key in target.raw_bodies:
        return draw(target.raw_bodies[key])
    if kind in ("schema", "raw") and key in target.schemas:
        value = draw(near_schema(target.schemas[key]))
        return json.dumps(value).encode()
    if kind == "deep":
        depth = draw(st.sampled_from([64, 65, 200, 1000, 10_000, 100_000]))
        raw = nested(depth, draw(st.sampled_from(["array", "object"])))
        schema = target.schemas.get(key)
        if schema is not None and draw(st.booleans()):  # deep inside a plausible envelope
            marker = draw(st.sampled_from(sorted(schema.fields)))
            envelope = json.dumps(schema.wrap({marker: "@@"})).encode()
            return envelope.replace(b'"@@"', raw, 1)
        return raw
    if kind == "binary":
        return draw(st.sampled_from([b"\xff\xfe", b"\xc3\x28", b'{"a": "\xff"}', b""])) + draw(
            st.binary(max_size=64)
        )
    if kind == "big":
        size = draw(st.sampled_from([256 * 1024 + 1, 300 * 1024, 2 * 1024 * 1024]))
        return b'{"name": "' + b"x" * size + b'"}'
    return json.dumps(draw(json_values())).encode()


def requests(target: Target) -> st.SearchStrategy[Fuzzed]:
    """One request to one of the target's routes."""

    @st.composite
    def build(draw: st.DrawFn) -> Fuzzed:
        weighted = [r for r in target.routes for _ in range(3 if r.takes_body else 1)]
        route = draw(st.sampled_from(weighted))  # the routes that read a body, more often
        own = [m for m in route.methods if m != "HEAD"] or list(route.methods)
        method = draw(
            st.sampled_from(own) if draw(st.integers(0, 9)) else st.sampled_from(EVERY_METHOD)
        )
        values = {}
        for name in route.params:
            plausible = list(target.values(name))
            hostile = st.sampled_from(HOSTILE_TEXT) | st.text(min_size=1, max_size=20)
            known = plausible and draw(st.integers(0, 3))  # 3 in 4: a value the app knows
            values[name] = draw(st.sampled_from(plausible) if known else hostile)
        path = fill(route.path, values)
        params = draw(
            st.lists(
                st.tuples(
                    st.sampled_from(QUERY_NAMES),
                    st.sampled_from(QUERY_VALUES)
                    | st.sampled_from(HOSTILE_TEXT)
                    | st.text(max_size=8),
                ),
                max_size=4,
            )
        )
        good = [k for k in target.credentials if k.startswith(AUTHENTICATED)]
        labels = good if good and draw(st.integers(0, 2)) else sorted(target.credentials)
        label = draw(st.sampled_from(labels))  # 2 in 3: credentials that let it in
        headers = dict(target.credentials[label])
        content_type = draw(st.sampled_from(CONTENT_TYPES))
        if content_type:
            headers["content-type"] = content_type
        extra = draw(
            st.dictionaries(
                st.sampled_from(
                    ["last-event-id", "idempotency-key", "a2a-version", "a2a-extensions"]
                ),
                st.sampled_from(["0", "-1", "1.0", "0.3", "9" * 40, "x", "a" * 300]),
                max_size=2,
            )
        )
        headers.update(extra)
        body = _body(draw, target, method, route) if method not in ("GET", "HEAD") else None
        return Fuzzed(method, path, params, headers, body, route.path)

    return build()


# -- answers ----------------------------------------------------------------------------------
LIBRARIES = ("justkernel.", "a2a.", "sqlalchemy.", "pydantic", "starlette.", "httpx.", "zipfile")


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


@functools.cache
def leak_pattern() -> re.Pattern[str]:
    """Tracebacks, and the name of any exception class of Python, the lab or the libraries it
    answers through (computed on first use, once the apps are imported)."""
    names = {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and name.endswith(("Error", "Exception", "Interrupt", "Iteration", "Exit"))
    }
    names |= {
        sub.__name__
        for sub in _subclasses(BaseException)
        if sub.__module__.startswith(LIBRARIES) and len(sub.__name__) >= 6
    }
    return re.compile(
        r"Traceback \(most recent call last\)|File \"|sqlalchemy\.|pydantic_core\.|"
        + r"\b(?:"
        + "|".join(sorted(map(re.escape, names)))
        + r")\b"
    )


# A2A 1.0 errors carry google.rpc detail types ("type.googleapis.com/google.rpc.BadRequest"):
# protocol names, not exceptions
PROTOCOL_TYPES = re.compile(r"type\.googleapis\.com/google\.rpc\.\w+")


def problem(response: httpx.Response) -> str | None:
    """Why this answer is a failure (a 5xx, a traceback, an internal JSON-RPC error), or None."""
    if response.status_code >= 500:
        return f"status {response.status_code}: {response.text[:400]}"
    text = PROTOCOL_TYPES.sub("", response.content.decode("utf-8", "replace"))
    leak = leak_pattern().search(text)
    if leak:
        start = max(0, leak.start() - 120)
        return f"the body shows {leak.group(0)!r}: …{text[start : leak.end() + 120]}…"
    if '"jsonrpc"' in text[:200] and str(JSONRPC_INTERNAL_ERROR) in text:
        return f"JSON-RPC internal error: {text[:400]}"
    return None


STREAMS_FOREVER = ("/stream",)
HANG_SECONDS = 120.0  # not a performance goal: a request still open then is reported by name


async def send(target: Target, request: Fuzzed) -> str | None:
    """Send it; a failure names the request. An exception out of the app is a failure too."""
    target.hit[request.route] += 1
    try:
        if request.route.endswith(STREAMS_FOREVER) and target.app is not None:
            call = first_frame(target.app, request)
        else:
            headers = {k: v.encode("utf-8") for k, v in request.headers.items()}  # any text
            call = target.client.request(
                request.method, request.url, headers=headers, content=request.body
            )
        response = await asyncio.wait_for(call, HANG_SECONDS)
    except TimeoutError:
        return f"{request.describe()}\n  still open after {HANG_SECONDS:.0f} s"
    except Exception as exc:  # the app raised: the real server would answer 500
        target.sent[500] += 1
        return f"{request.describe()}\n  raised {type(exc).__name__}: {str(exc)[:300]}"
    target.sent[response.status_code] += 1
    found = problem(response)
    return None if found is None else f"{request.describe()}\n  {found}"


async def first_frame(app: ASGIApp, request: Fuzzed) -> httpx.Response:
    """Call the app directly and hang up after its first body frame, as a browser closing
    the tab would: an event stream never completes, so httpx's ASGI transport would wait."""
    url = httpx.URL("http://127.0.0.1:4173" + request.url)
    headers = [(b"host", b"127.0.0.1:4173")] + [
        (k.lower().encode("latin-1"), v.encode("utf-8")) for k, v in request.headers.items()
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": "http",
        "path": url.path,
        "raw_path": url.raw_path.split(b"?")[0],
        "query_string": url.query,
        "headers": headers,
        "server": ("127.0.0.1", 4173),
        "client": ("127.0.0.1", 50123),
        "root_path": "",
    }
    framed = asyncio.Event()
    sent_body = False
    status = 0
    chunks: list[bytes] = []
    response_headers: list[tuple[bytes, bytes]] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": request.body or b"", "more_body": False}
        await framed.wait()
        return {"type": "http.disconnect"}

    async def send_message(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            response_headers.extend(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if chunks[-1] or not message.get("more_body", False):
                framed.set()

    await app(scope, receive, send_message)  # type: ignore[arg-type]
    return httpx.Response(status, headers=response_headers, content=b"".join(chunks))


# -- oversized bodies ---------------------------------------------------------------------------
def rss_kib() -> int:
    with open("/proc/self/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))  # type: ignore[union-attr]


def peak_rss_kib() -> int:
    with open("/proc/self/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))  # type: ignore[union-attr]


def reset_peak_rss() -> None:
    """Linux: writing 5 to clear_refs resets VmHWM to the current RSS."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


async def lazy_body(total: int, chunk: int = 1 << 20) -> AsyncIterator[bytes]:
    """`total` bytes of a JSON string, made of one reused chunk: the test never holds them."""
    block = b"x" * chunk
    yield b'{"name": "'
    sent = 0
    while sent < total:
        yield block
        sent += chunk
    yield b'"}'


# -- bundles --------------------------------------------------------------------------------------
def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# -- no traffic off this machine -------------------------------------------------------------
LOOPBACK = ("127.", "::1", "localhost", "0.0.0.0")


@contextmanager
def loopback_only(refused: list[str]) -> Iterator[None]:
    """While fuzzing, a connection or name lookup off loopback is refused and recorded (a
    fuzzed preset could name any URL; nothing may leave the machine)."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def allowed(address: Any) -> bool:
        host = address[0] if isinstance(address, tuple) else address
        return str(host).startswith(LOOPBACK)

    def connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not allowed(address):
            refused.append(str(address))
            raise ConnectionRefusedError(f"the fuzz allows loopback only, not {address}")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not allowed(address):
            refused.append(str(address))
            return 111
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        text = host.decode() if isinstance(host, bytes) else host
        if text is not None and not allowed((text,)):
            refused.append(str(host))
            raise socket.gaierror(socket.EAI_NONAME, "the fuzz resolves loopback only")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    try:
        yield
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo  # type: ignore[assignment]
