"""Browser and API authentication.

A one-time bootstrap token (printed in the terminal link) is traded for a session cookie signed
with a per-installation key, so a server restarted by the supervisor still honours the cookie.
Scripts use `Authorization: Bearer <api token>`. Everything except `/health` and the bootstrap
route answers 401 without one of the two.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

SESSION_COOKIE = "jk_session"  # the prefix: the cookie itself is named for its port
SESSION_SECONDS = 14 * 24 * 3600
OPEN_PATHS = ("/health", "/auth/bootstrap")


def session_cookie_name(port: int) -> str:
    """Cookies ignore ports: the lab, the demo and anything else on 127.0.0.1 share one jar.
    A name per port keeps one server's cookie from replacing (or being offered to) another's."""
    return f"{SESSION_COOKIE}_{port}"


def _load_or_create_key(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, secrets.token_hex(32).encode())
        finally:
            os.close(fd)
    return path.read_bytes().strip()


@dataclass
class AuthState:
    """The signing key, the bootstrap token and the optional API token of one server."""

    signing_key: bytes
    bootstrap_token: str
    api_token: str | None = None
    used_marker: Path | None = None  # survives restarts: a used token stays used
    _used: bool = field(default=False, init=False)

    @classmethod
    def create(
        cls,
        config_dir: Path,
        data_dir: Path,
        *,
        bootstrap_token: str | None = None,
        api_token: str | None = None,
    ) -> AuthState:
        return cls(
            signing_key=_load_or_create_key(config_dir / "session.key"),
            bootstrap_token=bootstrap_token or secrets.token_urlsafe(24),
            api_token=api_token,
            used_marker=data_dir / "run" / "bootstrap.used",
        )

    def _token_digest(self) -> str:
        return hashlib.sha256(self.bootstrap_token.encode()).hexdigest()

    def consume_bootstrap(self, offered: str) -> bool:
        """True once for the right token; never again, also after a restart."""
        if self._used or not _same(offered, self.bootstrap_token):
            return False
        if self.used_marker is not None:
            if self.used_marker.exists() and self.used_marker.read_text() == self._token_digest():
                self._used = True
                return False
            self.used_marker.parent.mkdir(parents=True, exist_ok=True)
            self.used_marker.write_text(self._token_digest())
        self._used = True
        return True

    def new_session_cookie(self) -> str:
        body = json.dumps({"exp": int(time.time()) + SESSION_SECONDS, "n": secrets.token_hex(8)})
        sig = hmac.new(self.signing_key, body.encode(), hashlib.sha256).hexdigest()
        return f"{body.encode().hex()}.{sig}"

    def session_valid(self, cookie: str) -> bool:
        try:
            body_hex, sig = cookie.split(".", 1)
            body = bytes.fromhex(body_hex)
        except ValueError:
            return False
        expected = hmac.new(self.signing_key, body, hashlib.sha256).hexdigest()
        if not _same(sig, expected):
            return False
        try:
            return int(json.loads(body)["exp"]) > time.time()
        except (ValueError, KeyError, TypeError):
            return False

    def bearer_valid(self, header: str) -> bool:
        if not self.api_token or not header.startswith("Bearer "):
            return False
        return _same(header[7:].strip(), self.api_token)


def _same(offered: str, expected: str) -> bool:
    """Constant-time comparison of text a client sent: `compare_digest` raises TypeError on
    non-ASCII `str` (a 500 for `?token=é`), so both sides are compared as UTF-8 bytes."""
    return hmac.compare_digest(
        offered.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


def _cookie_value(scope: Scope, name: str) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"cookie":
            for part in value.decode("latin-1").split(";"):
                k, _, v = part.strip().partition("=")
                if k == name:
                    return v
    return None


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return ""


class AuthMiddleware:
    """Pure ASGI middleware (works with streaming responses, unlike BaseHTTPMiddleware)."""

    def __init__(
        self,
        app: ASGIApp,
        auth: AuthState,
        cookie_name: str,
        open_prefixes: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.auth = auth
        self.cookie_name = cookie_name
        self.open_prefixes = open_prefixes

    def _allowed(self, scope: Scope) -> bool:
        path: str = scope.get("path", "")
        if path in OPEN_PATHS or any(path.startswith(p) for p in self.open_prefixes):
            return True
        cookie = _cookie_value(scope, self.cookie_name)
        if cookie and self.auth.session_valid(cookie):
            return True
        return self.auth.bearer_valid(_header(scope, b"authorization"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "error": "unauthorized",
                "detail": "open the link with the token printed when the server started",
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
