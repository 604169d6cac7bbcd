"""`justkernel judge-server`: the local judge, a separate service with its own hidden points.

It prints its URL and where the login token is (never the token itself). The judge folder
(default `<config dir>/judge`, i.e. `$XDG_CONFIG_HOME/justkernel/judge`) holds the secret seed,
the hidden cases, the token and the judge's database; it is refused if it overlaps the lab's
data folder, where the team workspaces live.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Annotated

import typer

from justkernel.cli.common import fail, settings_or_exit

DEFAULT_PORT = 4180


def judge_server_command(
    host: Annotated[str, typer.Option(help="Address to bind; loopback unless --allow-remote.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = DEFAULT_PORT,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="The judge folder (secrets, hidden points, results)."),
    ] = None,
    work_dir: Annotated[
        Path | None,
        typer.Option("--work-dir", help="Root of the evaluation folder (default: system temp)."),
    ] = None,
    per_minute: Annotated[
        int, typer.Option("--submissions-per-minute", min=1, help="Per-account rate.")
    ] = 10,
    daily_quota: Annotated[
        int, typer.Option("--daily-quota", min=1, help="Submissions a day (00:00 Shanghai).")
    ] = 50,
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Allow binding off loopback.")
    ] = False,
) -> None:
    """Run the local judge: official API shape, hidden points, daily quota."""
    import uvicorn

    from justkernel.core.addresses import is_loopback
    from justkernel.judge.paths import JudgeFolder, JudgeFolderError
    from justkernel.judge.server import JudgeConfig, create_judge_app
    from justkernel.web.server import bind_socket

    if not is_loopback(host) and not allow_remote:
        fail(f"refusing to bind the judge to {host}; pass --allow-remote to do it on purpose")
    settings = settings_or_exit()
    try:
        folder = JudgeFolder.open(
            data_dir or settings.config_dir / "judge",
            work_root=work_dir,
            lab_data_dir=settings.resolved_data_dir,
        )
    except (JudgeFolderError, OSError) as exc:
        fail(str(exc))
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        fail(f"cannot bind {host}:{port}: {exc.strerror}")
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}"
    config = JudgeConfig(
        folder, submissions_per_minute=per_minute, daily_quota=daily_quota, url=url
    )
    app = create_judge_app(config)
    logging.basicConfig(level="INFO", format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    server = uvicorn.Server(uvicorn.Config(app, access_log=False, log_config=None))
    typer.echo(f"JustKernel judge serving on {url}")
    typer.echo(f"Login token: {folder.token_path} (POST /api/login, or use it as a bearer)")
    typer.echo(f"Judge folder: {folder.root} ({len(app.state.judge.point_ids)} hidden points)")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve(sockets=[sock]))


def register(app: typer.Typer) -> None:
    app.command("judge-server")(judge_server_command)
