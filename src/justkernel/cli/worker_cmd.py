"""`justkernel worker ...`: the commands a remote host runs for the lab.

    justkernel worker run-job JOB_DIR     one job from its folder; prints the JSON receipt
    justkernel worker serve --scratch D   many jobs over stdin/stdout (what the SSH pool uses)
    justkernel worker info --scratch D    host, toolchain id and version, free disk (JSON)

Exit codes of `run-job`: 0 a receipt was written (whatever the candidate's status), 3 the host
could not judge the job (no sandbox, missing pack, wrong toolchain version...).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

worker_app = typer.Typer(help="Run lab jobs on this host (used by the SSH and Dask pools).")

ScratchOption = Annotated[
    Path,
    typer.Option("--scratch", help="This host's scratch folder (jobs, packs, toolchain caches)."),
]
ToolchainOption = Annotated[
    str,
    typer.Option("--toolchain", help="The toolchain this host offers: cpu, ascendc-cpu or cann."),
]


@worker_app.command("run-job")
def run_job(
    job_dir: Annotated[Path, typer.Argument(help="The job folder (job.json, src/).")],
    packs: Annotated[
        Path | None,
        typer.Option("--packs", help="Input packs folder; default: JOB_DIR/../../packs."),
    ] = None,
) -> None:
    """Run one job from its folder and print its receipt as JSON."""
    import asyncio

    from justkernel.workers.worker_entry import run_job_dir

    def progress(stage: str) -> None:
        print(stage, file=sys.stderr, flush=True)

    try:
        receipt = asyncio.run(run_job_dir(job_dir.resolve(), packs_dir=packs, progress=progress))
    except Exception as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        raise typer.Exit(3) from None
    typer.echo(receipt.model_dump_json())


@worker_app.command("serve")
def serve(
    scratch: ScratchOption = Path("/tmp/justkernel"), toolchain: ToolchainOption = "cpu"
) -> None:
    """Serve jobs as JSON lines on stdin/stdout until stdin closes."""
    import asyncio
    import logging

    from justkernel.workers.worker_session import serve_stdio

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    asyncio.run(serve_stdio(scratch, toolchain))


@worker_app.command("info")
def info(
    scratch: ScratchOption = Path("/tmp/justkernel"), toolchain: ToolchainOption = "cpu"
) -> None:
    """Print this host's name, toolchain version facts and free scratch disk as JSON."""
    from justkernel.workers.worker_entry import Toolchains, open_dir, worker_info

    folder = open_dir(scratch)
    typer.echo(json.dumps(worker_info(Toolchains(folder / "toolchains"), toolchain, folder)))


def register(app: typer.Typer) -> None:
    app.add_typer(worker_app, name="worker")
