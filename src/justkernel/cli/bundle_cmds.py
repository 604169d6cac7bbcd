"""`justkernel export RUN --output FILE` and `justkernel import FILE`: session bundles.

Refusals (a secret in an event, a bad or foreign file) print one line and exit with code 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from justkernel.cli.common import (
    console,
    err_console,
    fail,
    lab_context,
    run_async,
    settings_or_exit,
)

if TYPE_CHECKING:  # the store's imports cost seconds: only these commands pay for them
    from justkernel.events.run_archive import ProgressFn
    from justkernel.events.run_export import ExportResult
    from justkernel.events.run_import import ImportResult


def _say(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


@contextmanager
def _progress_bar() -> Iterator[ProgressFn]:
    """A rich progress bar per stage, on stderr, gone when done (silent when not a terminal)."""
    columns = (
        TextColumn("{task.description:<16}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err_console, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def export_cmd(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Id of the run to export.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Bundle file to write (a zip).")],
    force: Annotated[bool, typer.Option("--force", help="Replace OUTPUT if it exists.")] = False,
) -> None:
    """Export a run as one self-contained bundle (events, blobs, manifest; never secrets)."""
    from justkernel.events.run_archive import BundleError
    from justkernel.events.run_export import export_run
    from justkernel.store.runs import UnknownRun

    settings = settings_or_exit()

    async def go() -> ExportResult:
        async with lab_context(settings) as lab:
            with _progress_bar() as progress:
                return await export_run(lab, run_id, output, overwrite=force, progress=progress)

    try:
        result = run_async(go)
    except UnknownRun:
        fail(escape(f"no run with id {run_id!r}"))
    except BundleError as exc:
        fail(escape(f"export refused: {exc}"))
    _say(f"exported run {result.run_id} to {result.path}")
    _say(f"  sha256  {result.sha256}")
    _say(f"  events  {result.event_count}, blobs {result.blob_count}, {result.size:,} bytes")


def import_cmd(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Bundle file to import.")],
    name: Annotated[
        str | None, typer.Option("--name", help="Name of the new run (default: the source's).")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only validate the bundle; import nothing.")
    ] = False,
) -> None:
    """Validate a bundle and load it as a new read-only replay run."""
    from justkernel.events.run_archive import BundleError
    from justkernel.events.run_archive_check import check_bundle
    from justkernel.events.run_import import import_bundle

    settings = settings_or_exit()
    if check:
        try:
            with _progress_bar() as progress:
                bundle = check_bundle(
                    file,
                    settings.export_max_bytes,
                    progress,
                    max_events=settings.import_max_events,
                    keep_events=False,
                )
        except BundleError as exc:
            fail(escape(f"import refused: {exc}"))
        _say(f"{file} is a valid bundle of run {bundle.manifest.run.source_run_id}")
        _say(f"  sha256  {bundle.sha256}")
        _say(f"  events  {bundle.event_count}, blobs {len(bundle.blobs)}")
        return

    async def go() -> ImportResult:
        async with lab_context(settings) as lab:
            with _progress_bar() as progress:
                return await import_bundle(lab, file, name=name, progress=progress)

    try:
        result = run_async(go)
    except BundleError as exc:
        fail(escape(f"import refused: {exc}"))
    _say(
        f"imported {file} as run {result.run.id} "
        f"(read-only replay of {result.source_run_id}) [{result.run.meta['provenance']}]"
    )
    _say(f"  sha256  {result.sha256}")
    _say(f"  events  {result.event_count}, blobs {result.blob_count}")


def register(app: typer.Typer) -> None:
    app.command("export")(export_cmd)
    app.command("import")(import_cmd)
