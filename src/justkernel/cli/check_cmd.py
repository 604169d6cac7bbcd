"""`justkernel check`: what is present and what is missing for each capability."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from justkernel.capabilities import host_capabilities, local_capabilities
from justkernel.cli.common import console, settings_or_exit


def check_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Report each capability of this machine: present or missing, and how to fix it."""
    caps = local_capabilities() + host_capabilities(settings_or_exit().hosts_file)
    if as_json:
        typer.echo(json.dumps({"capabilities": [c.to_dict() for c in caps]}, indent=2))
        return
    table = Table(title="JustKernel capabilities")
    for column in ("capability", "status", "detail", "needed for", "fix"):
        table.add_column(column)
    for cap in caps:
        status = "[green]present[/]" if cap.present else "[yellow]missing[/]"
        table.add_row(cap.name, status, cap.detail, cap.needed_for, cap.fix)
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)
