"""`justkernel check`: what is present and what is missing for each capability."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from justkernel.capabilities import (
    Capability,
    local_capabilities,
    missing_for_tests,
    suite_needs,
    target_readiness,
)
from justkernel.capabilities.hosts import host_capabilities
from justkernel.cli.common import console, err_console, settings_or_exit


def check_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    require_for_tests: Annotated[
        bool,
        typer.Option(
            "--require-for-tests",
            help="Check only what the test suite needs; exit 1 naming each missing capability.",
        ),
    ] = False,
) -> None:
    """Report each capability of this machine: present or missing, and how to fix it."""
    if require_for_tests:
        _require_for_tests(local_capabilities())
        return
    settings = settings_or_exit()
    caps = local_capabilities() + host_capabilities(settings.hosts_file)
    ready, line = target_readiness(settings.toolchain, caps)
    if as_json:
        target = {"toolchain": settings.toolchain, "ready": ready, "detail": line}
        capabilities = [c.to_dict() for c in caps]
        typer.echo(json.dumps({"capabilities": capabilities, "default_target": target}, indent=2))
        return
    table = Table(title="JustKernel capabilities")
    for column in ("capability", "status", "detail", "needed for", "fix"):
        table.add_column(column)
    for cap in caps:
        status = "[green]present[/]" if cap.present else "[yellow]missing[/]"
        table.add_row(cap.name, status, cap.detail, cap.needed_for, cap.fix)
    console.print(table)
    console.print(f"[green]{line}[/]" if ready else f"[yellow]{line}[/]", highlight=False)


def _require_for_tests(caps: list[Capability]) -> None:
    """The preflight of `./start.sh test`: the suite must not pass by skipping what is missing."""
    missing = missing_for_tests(caps)
    if not missing:
        typer.echo(f"all {len(suite_needs())} capabilities the test suite needs are present")
        return
    for cap in missing:
        err_console.print(
            f"[bold red]missing:[/] {cap.name} ({cap.detail}); needed for {cap.needed_for}; "
            f"fix: {cap.fix}",
            highlight=False,
            soft_wrap=True,
        )
    names = ", ".join(cap.name for cap in missing)
    err_console.print(
        f"the test suite needs {len(missing)} more capabilit"
        f"{'y' if len(missing) == 1 else 'ies'}: {names}",
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)
