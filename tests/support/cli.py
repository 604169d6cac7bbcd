"""`justkernel ARGS` as a user in another terminal runs it, on a test lab's folders, in this
process (typer's CliRunner: the real command, without the ~1.5-4 CPU-s a fresh interpreter
spends importing it). Call it through `asyncio.to_thread` from an async test: the command runs
its own event loop, and a stand-in the test serves keeps answering meanwhile. A command that
installs signal handlers (`run`) needs a process of its own instead."""

from __future__ import annotations

from click.testing import Result
from langchain_openai.chat_models import _client_utils
from typer.testing import CliRunner

from justkernel.cli import common
from justkernel.cli.main import app
from justkernel.settings.config import Settings


def run_cli(settings: Settings, *args: str, **extra_env: str) -> Result:
    """The command's result (exit code, output, stderr) with the lab's data, config and model
    files, and `extra_env` (COLUMNS for a wide table, say)."""
    env = {
        "JUSTKERNEL_DATA_DIR": str(settings.data_dir),
        "JUSTKERNEL_CONFIG_DIR": str(settings.config_dir),
        "JUSTKERNEL_MODELS_LOCAL_FILE": str(settings.models_local_file),
        **extra_env,
    }
    # a fresh process reads COLUMNS when it makes its consoles; these were made once, at import,
    # with whatever width the first test had: give them this call's, or a pipe's 80
    for console in (common.console, common.err_console):
        console.width = int(extra_env.get("COLUMNS", "80"))
    try:
        return CliRunner().invoke(app, list(args), env=env)
    finally:
        # a fresh process would start without langchain-openai's per-process httpx clients;
        # the ones this command cached belong to its event loop, now closed
        _client_utils._cached_async_httpx_client.cache_clear()
        _client_utils._cached_sync_httpx_client.cache_clear()
