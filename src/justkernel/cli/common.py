"""Helpers shared by CLI commands: settings loading, the lab context, clean error exits."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, NoReturn, TypeVar

from rich.console import Console

from justkernel.settings.config import ConfigError, Settings, load_settings

if TYPE_CHECKING:
    from justkernel.lab import Lab

T = TypeVar("T")
console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error (no traceback) and exit with `code`."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    sys.exit(code)


def settings_or_exit(**overrides: object) -> Settings:
    try:
        return load_settings(**overrides)
    except ConfigError as exc:
        fail(str(exc))


@asynccontextmanager
async def lab_context(settings: Settings) -> AsyncIterator[Lab]:
    from justkernel.lab import open_lab  # the store's imports are heavy; only commands pay

    lab = await open_lab(settings)
    try:
        yield lab
    finally:
        await lab.close()


def run_async(factory: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(factory())  # type: ignore[arg-type]
