"""What the web attack tests share: the real `justkernel serve` signed in the way a browser is
(the session cookie from the one-time link), and a listener that records what reaches it.

The listener plays the attacker's server: a plain HTTP server on a free loopback port that
keeps every request's headers and answers 401, so a leaked key would land in `requests`.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.server import RunningServer, folder_server


@dataclass
class SignedIn:
    """A running lab and the browser's session cookie for it."""

    server: RunningServer
    folder: Path
    cookie_name: str
    cookie_value: str

    @property
    def port(self) -> int:
        return int(self.server.base_url.rsplit(":", 1)[1])

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.server.base_url,
            cookies={self.cookie_name: self.cookie_value},
            timeout=60,
        )


@contextmanager
def signed_in_lab(folder: Path, *args: str, **env: str) -> Iterator[SignedIn]:
    """`justkernel serve` with its data, config, models and hosts files under `folder`."""
    with folder_server(folder, *args, **env) as server:
        answer = httpx.get(server.link, follow_redirects=False, timeout=30)
        assert answer.status_code == 303, answer.text
        (name, value), *_ = answer.cookies.items()
        yield SignedIn(server, folder, name, value)


@dataclass
class Listener:
    """The attacker's server: records the headers of every request it gets."""

    port: int
    requests: list[dict[str, str]] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def saw(self, secret: str) -> bool:
        return any(secret in value for headers in self.requests for value in headers.values())


@contextmanager
def listener() -> Iterator[Listener]:
    recorded: list[dict[str, str]] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            recorded.append({k.lower(): v for k, v in self.headers.items()})
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            body = b'{"error": {"message": "no", "code": "invalid_api_key"}}'
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Listener(server.server_address[1], recorded)
    finally:
        server.shutdown()
        server.server_close()
