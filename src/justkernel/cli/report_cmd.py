"""`justkernel report RUN --output FILE`: the run report as Markdown (`.md`) or a standalone
HTML page (`.html`), built from the run's events; see `justkernel.reports.report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from justkernel.cli.common import fail, lab_context, run_async, settings_or_exit


def report_command(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Id of the run.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Report file (.md or .html).")],
    fmt: Annotated[
        str | None, typer.Option("--format", help="md or html (default: from the file name).")
    ] = None,
    lang: Annotated[str, typer.Option("--lang", help="Headings in en or zh.")] = "en",
) -> None:
    """Write a run report: goal, best candidates with receipts and diffs, official results,
    Judger decisions and the cycles-over-time plot."""
    from justkernel.reports.i18n import lang_of
    from justkernel.reports.report import build_report, fold_run, plot_svg
    from justkernel.store.runs import UnknownRun

    chosen = fmt or ("html" if output.suffix.lower() in (".html", ".htm") else "md")
    if chosen not in ("md", "html"):
        fail("--format must be md or html")
    if not output.parent.is_dir():
        fail(f"folder {output.parent} does not exist")
    settings = settings_or_exit()
    plot_name = f"{output.stem}-cycles.svg" if chosen == "md" else None

    async def go() -> str:
        async with lab_context(settings) as lab:
            text = await build_report(lab, run_id, chosen, plot_file=plot_name, lang=lang_of(lang))
            if plot_name:
                svg = plot_svg(await fold_run(lab, run_id))
                (output.parent / plot_name).write_text(svg, encoding="utf-8")
            return text

    try:
        text = run_async(go)
    except UnknownRun:
        fail(f"no run with id {run_id!r}")
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}" + (f" and {output.parent / plot_name}" if plot_name else ""))


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
