"""Run the app under uvicorn on a socket we bind ourselves, so the link shows the real port."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import webbrowser
from collections.abc import Callable
from typing import Literal

import uvicorn

from justkernel.a2a.endpoint import open_a2a
from justkernel.app.runtime import lab_board
from justkernel.core.addresses import is_loopback
from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from justkernel.settings.redaction import install_log_redaction
from justkernel.web.app import create_app
from justkernel.web.auth import AuthState
from justkernel.web.control import RunController
from justkernel.web.demo import DemoPlayer, demo_bundle_path
from justkernel.web.request_guard import ServedOrigin

log = logging.getLogger("justkernel.server")
DemoMode = Literal["only", "start"] | None
MIN_REMOTE_TOKEN_LENGTH = 24


class UnsafeBind(ValueError):
    """Binding off loopback without the explicit flag and a strong token."""


def check_bind(host: str, allow_remote: bool, api_token: str | None) -> None:
    if is_loopback(host):
        return
    if not allow_remote:
        raise UnsafeBind(
            f"refusing to bind to {host}: other hosts could reach the lab. "
            "Pass --allow-remote and set JUSTKERNEL_API_TOKEN to do it on purpose."
        )
    if not api_token or len(api_token) < MIN_REMOTE_TOKEN_LENGTH:
        raise UnsafeBind(
            f"binding to {host} needs JUSTKERNEL_API_TOKEN of at least "
            f"{MIN_REMOTE_TOKEN_LENGTH} characters"
        )


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio turns Nagle off (TCP_NODELAY) only on accepted
    # sockets whose proto says TCP; with proto 0 every small answer waited ~40 ms for the
    # client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def dashboard_link(host: str, port: int, token: str) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/auth/bootstrap?token={token}"


def setup_logging(settings: Settings) -> None:
    settings.logs_dir.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.StreamHandler(), logging.FileHandler(settings.logs_dir / "server.log")],
        force=True,
    )
    install_log_redaction()


async def serve(
    settings: Settings,
    *,
    bootstrap_token: str | None = None,
    open_browser: bool = False,
    announce: Callable[[str], None] = print,
    sock: socket.socket | None = None,
    demo: DemoMode = None,
    demo_speed: float = 6.0,
) -> None:
    """Open the lab, bind, print the link, and serve until interrupted.

    `demo="only"` is `justkernel demo` (the recorded session, nothing else); `demo="start"`
    is `serve --demo` (the full server, playing the demo from the start)."""
    lab = await open_lab(settings)
    auth = AuthState.create(
        settings.config_dir,
        settings.resolved_data_dir,
        bootstrap_token=bootstrap_token,
        api_token=settings.api_token,
    )
    player = (
        DemoPlayer(lab, speed=demo_speed)
        if demo is not None or demo_bundle_path().is_file()
        else None
    )
    board = lab_board(lab)  # one per process: the runs' teams and A2A teams share it
    controller = None if demo == "only" else RunController(lab, board)
    try:
        async with contextlib.AsyncExitStack() as stack:
            sock = sock or bind_socket(settings.host, settings.port)
            port = sock.getsockname()[1]
            served = ServedOrigin.for_bind(settings.host, port, settings.public_host)
            a2a = None
            if controller is not None:  # outside agents join as teams over A2A (not the demo)
                a2a = await stack.enter_async_context(
                    open_a2a(lab, controller.evaluator, origin=served.origin, board=board)
                )
            app = create_app(
                lab,
                auth,
                controller=controller,
                demo=player,
                demo_only=demo == "only",
                start_demo=demo is not None,
                a2a=a2a,
                served=served,
            )
            config = uvicorn.Config(
                app,
                log_level=settings.log_level,
                timeout_keep_alive=75,
                access_log=False,
                log_config=None,
            )
            server = uvicorn.Server(config)
            link = dashboard_link(settings.host, port, auth.bootstrap_token)
            if demo == "only":
                announce(
                    "JustKernel demo: a recorded session (simulated data, no model, no network)"
                )
            announce(f"JustKernel is serving on http://{settings.host}:{port}")
            announce(f"Open the dashboard: {link}")
            if open_browser:
                asyncio.get_running_loop().call_later(0.5, webbrowser.open, link)
            await server.serve(sockets=[sock])
    finally:
        await lab.close()
