"""`justkernel demo [--open] [--port N] [--speed X]`: the dashboard playing a recorded session.

It needs only Python and a browser: no gcc, valgrind or bubblewrap, no model, no network, and
it reads no credentials — settings come from arguments alone (no `.env`, no secrets store), and
the data lives in a temporary folder that is removed on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from justkernel.cli.common import fail


def demo_command(
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = 4174,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the dashboard.")] = False,
    speed: Annotated[
        float, typer.Option(min=0.1, max=1000, help="Playback speed (recorded time / speed).")
    ] = 6.0,
) -> None:
    """Serve the dashboard playing the bundled demo session (simulated data)."""
    from justkernel.settings.config import Settings
    from justkernel.web.demo import demo_bundle_path
    from justkernel.web.server import bind_socket, serve, setup_logging

    if not demo_bundle_path().is_file():
        fail(f"the demo session is missing: {demo_bundle_path()}")
    folder = Path(tempfile.mkdtemp(prefix="justkernel-demo-"))
    try:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]  # a demo reads no .env
            data_dir=folder / "data",
            config_dir=folder / "config",
            database_url=None,
            api_token=None,
            provider_keys=None,  # JUSTKERNEL_PROVIDER_KEYS is not read either
            host="127.0.0.1",
            port=port,
            hosts_file=folder / "hosts.toml",
            models_local_file=folder / "models.local.toml",
        )
        try:
            sock = bind_socket(settings.host, settings.port)
        except OSError as exc:
            fail(f"cannot bind {settings.host}:{settings.port}: {exc.strerror}")
        setup_logging(settings)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(
                serve(
                    settings,
                    bootstrap_token=secrets.token_urlsafe(24),
                    open_browser=open_browser,
                    announce=lambda line: typer.echo(line),
                    sock=sock,
                    demo="only",
                    demo_speed=speed,
                )
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
