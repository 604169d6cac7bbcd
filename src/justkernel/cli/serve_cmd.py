"""`justkernel serve`: the lab server, optionally under a crash-restarting supervisor."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
from typing import Annotated

import typer

from justkernel.cli.common import fail, settings_or_exit
from justkernel.web.server import UnsafeBind, bind_socket, check_bind, serve, setup_logging
from justkernel.web.supervisor import child_command, child_env, supervise


def serve_command(
    host: Annotated[
        str, typer.Option(help="Address to bind; loopback unless --allow-remote.")
    ] = "",
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = -1,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the dashboard.")] = False,
    supervise_: Annotated[
        bool, typer.Option("--supervise", help="Restart the server after a crash.")
    ] = False,
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Allow binding off loopback (needs a token).")
    ] = False,
    demo: Annotated[
        bool, typer.Option("--demo", help="Also play the bundled demo session (simulated).")
    ] = False,
) -> None:
    """Run the lab server and print the dashboard link (with a one-time token)."""
    overrides: dict[str, object] = {}
    if host:
        overrides["host"] = host
    if port >= 0:
        overrides["port"] = port
    settings = settings_or_exit(**overrides)
    try:
        check_bind(settings.host, allow_remote, settings.api_token)
    except UnsafeBind as exc:
        fail(str(exc))
    token = os.environ.get("JUSTKERNEL_BOOTSTRAP_TOKEN") or secrets.token_urlsafe(24)
    inherited = os.environ.get("JUSTKERNEL_LISTEN_FD")
    try:
        sock = (
            socket.socket(fileno=int(inherited))
            if inherited
            else bind_socket(settings.host, settings.port)
        )
    except OSError as exc:
        fail(f"cannot bind {settings.host}:{settings.port}: {exc.strerror}")
    if supervise_:
        args = ["serve", "--host", settings.host, "--port", str(sock.getsockname()[1])]
        if allow_remote:
            args.append("--allow-remote")
        if demo:
            args.append("--demo")
        raise typer.Exit(
            supervise(
                child_command(args),
                env=child_env(token, sock.fileno()),
                pass_fds=(sock.fileno(),),
                say=lambda line: typer.echo(line, err=True),
            )
        )
    setup_logging(settings)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            serve(
                settings,
                bootstrap_token=token,
                open_browser=open_browser,
                announce=lambda line: typer.echo(line),
                sock=sock,
                demo="start" if demo else None,
            )
        )


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
