"""`justkernel secrets set|list|delete`: the encrypted secrets store, from the terminal."""

from __future__ import annotations

from typing import Annotated

import typer

from justkernel.cli.common import console, fail, settings_or_exit
from justkernel.settings.secrets import SecretsError, SecretsStore

secrets_app = typer.Typer(help="API keys and SSH passwords, encrypted outside the repo.")


def _store() -> SecretsStore:
    return SecretsStore(settings_or_exit().config_dir)


@secrets_app.command("set")
def set_secret(
    name: Annotated[str, typer.Argument(help="Name, e.g. qwen_api_key (see models.toml).")],
) -> None:
    """Store a secret; the value is read from a hidden prompt (or stdin), never an argument."""
    value = typer.prompt(f"value for {name}", hide_input=True)
    try:
        _store().set(name, value)
    except SecretsError as exc:
        fail(str(exc))
    console.print(f"stored secret [bold]{name}[/]")


@secrets_app.command("list")
def list_secrets() -> None:
    """Names of stored secrets (values are never shown)."""
    try:
        names = _store().names()
    except SecretsError as exc:
        fail(str(exc))
    for name in names:
        typer.echo(name)


@secrets_app.command("delete")
def delete_secret(name: str) -> None:
    try:
        removed = _store().delete(name)
    except SecretsError as exc:
        fail(str(exc))
    if not removed:
        fail(f"no secret named {name!r}", code=1)
    console.print(f"deleted secret [bold]{name}[/]")


def register(app: typer.Typer) -> None:
    app.add_typer(secrets_app, name="secrets")
