"""Which requests the lab answers at all: its own Host, and for changes its own origin and JSON.

Who is hostile: a web page on any other local port (same *site* as the lab for the browser,
so `SameSite=Strict` cookies go with its requests), and a page on a rebinding domain whose name
resolves to 127.0.0.1. One middleware, before authentication, refuses

- any request whose `Host` is not one the lab serves (421): the rebinding page's `Host` is its
  own domain;
- a state-changing request (POST/PUT/PATCH/DELETE) whose `Origin` is not the lab's own, or,
  without an Origin, whose `Sec-Fetch-Site` is neither `same-origin` nor `none` (403);
- a state-changing request with a body that is not `application/json` (or the one other type a
  route declares, the bundle upload's) (415): a form can send `text/plain` but never JSON.

Bearer-token scripts send no Origin and no Sec-Fetch-Site; they pass the origin rule.
`/a2a/` takes no cookie (each team has its own bearer token): only the Host rule applies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from justkernel.core.addresses import is_loopback

CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAME = frozenset({"same-origin", "none"})
JSON = "application/json"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@dataclass(frozen=True)
class ServedOrigin:
    """Where the lab is reached: loopback on `port`, plus `public_host` when it serves others.

    `origin` is the one URL the lab gives out about itself (links, the A2A agent card)."""

    port: int
    public_host: str = "127.0.0.1"
    scheme: str = "http"

    @classmethod
    def for_bind(cls, host: str, port: int, public_host: str | None = None) -> ServedOrigin:
        """Bound to a concrete non-loopback address, that address is public too; bound to a
        wildcard, only `public_host` (JUSTKERNEL_PUBLIC_HOST) is."""
        if public_host:
            return cls(port, _bracket(public_host.lower()))
        if host in ("0.0.0.0", "::", "", "localhost") or is_loopback(host):
            return cls(port, "[::1]" if host == "::1" else "127.0.0.1")
        return cls(port, _bracket(host.lower()))

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.public_host}:{self.port}"

    @property
    def hosts(self) -> frozenset[str]:
        names = {*LOOPBACK_NAMES, self.public_host}
        hosts = {f"{name}:{self.port}" for name in names}
        if self.port == 80:  # a browser leaves the default port out of Host
            hosts |= names
        return frozenset(hosts)


def _headers(scope: Scope) -> dict[bytes, str]:
    return {k: v.decode("latin-1") for k, v in scope.get("headers", [])}


def _has_body(headers: dict[bytes, str]) -> bool:
    length = headers.get(b"content-length", "").strip()
    return b"transfer-encoding" in headers or (length not in ("", "0"))


class RequestGuard:
    """Pure ASGI middleware; `body_types` maps a path to the body type it takes instead of JSON."""

    def __init__(
        self,
        app: ASGIApp,
        served: ServedOrigin,
        body_types: dict[str, frozenset[str]] | None = None,
        origin_exempt: tuple[str, ...] = ("/a2a/",),
    ) -> None:
        self.app = app
        self.served = served
        self.body_types = body_types or {}
        self.origin_exempt = origin_exempt

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        headers = _headers(scope)
        host = headers.get(b"host", "").strip().lower()
        if host not in self.served.hosts:
            return (
                421,
                "misdirected",
                f"this lab answers only as {self.served.origin} or on loopback; the request's "
                "Host header names another server (a lab reached by another name needs "
                "JUSTKERNEL_PUBLIC_HOST set to it)",
            )
        if scope["type"] != "http" or scope.get("method", "GET") not in CHANGING:
            return None
        path: str = scope.get("path", "")
        if any(path.startswith(prefix) for prefix in self.origin_exempt):
            return None
        origin = headers.get(b"origin")
        own = f"{scope.get('scheme', 'http')}://{host}"
        if origin is not None and origin.strip().lower() != own:
            return 403, "cross_origin", f"changes are accepted only from pages of {own}"
        site = headers.get(b"sec-fetch-site")
        if origin is None and site is not None and site.strip().lower() not in SAME:
            return 403, "cross_origin", f"changes are accepted only from pages of {own}"
        declared = headers.get(b"content-type")
        if declared is None and not _has_body(headers):
            return None
        allowed = self.body_types.get(path, frozenset({JSON}))
        media = (declared or "").split(";", 1)[0].strip().lower()
        if media not in allowed:
            return (
                415,
                "unsupported_media_type",
                f"send the body as {' or '.join(sorted(allowed))} (got {media[:80] or 'no type'})",
            )
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._refusal(scope) if scope["type"] in ("http", "websocket") else None
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, error, detail = refusal
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"error": error, "detail": detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
