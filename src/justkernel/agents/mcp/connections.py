"""How the lab reaches one MCP server: the adapters' connection dict, built from the config.

A stdio server is the lab's own child process, started per call in a folder of the lab's
(never a team's workspace), with the sandbox chain's fixed environment plus only what the
config names: allow-listed variables of the lab's environment and `mcp:` secrets. The MCP SDK
adds its short default list (HOME, PATH, USER, ...; no secrets) beneath, and our PATH wins. The
adapters expand `${VAR}` in environment values from the lab's environment, so a value holding
one is refused: it could pull a secret of the lab in.
"""

from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from justkernel.settings.mcp import HttpServer, McpConfigError, StdioServer
from justkernel.settings.secrets import SecretsStore
from justkernel.toolchains.sandbox.command import CHAIN_ENV


def _secret(secrets: SecretsStore, name: str, where: str) -> str:
    secret = secrets.get(name)
    if secret is None:
        raise McpConfigError(
            f"mcp.toml: {where}: secret {name!r} is not stored (justkernel secrets set {name})"
        )
    return secret.reveal()


def _plain(value: str, where: str) -> str:
    if "${" in value:
        raise McpConfigError(f"mcp.toml: {where}: a value holding '${{' is not passed")
    return value


def stdio_connection(
    name: str, server: StdioServer, secrets: SecretsStore, work_dir: Path
) -> dict[str, Any]:
    """The adapters' `StdioConnection` for `server`."""
    command = server.command
    if os.sep not in command:
        found = shutil.which(command)
        if found is None:
            raise McpConfigError(
                f"mcp.toml: servers.{name}.command: {command!r} is not on the lab's PATH"
            )
        command = found
    elif not os.access(command, os.X_OK):
        raise McpConfigError(
            f"mcp.toml: servers.{name}.command: {command!r} is not an executable file"
        )
    env = dict(CHAIN_ENV)
    for var in server.env:
        if var in os.environ:
            env[var] = _plain(os.environ[var], f"servers.{name}.env.{var}")
    for var, secret in server.secret_env.items():
        env[var] = _plain(_secret(secrets, secret, f"servers.{name}.secret_env.{var}"), var)
    work_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    return {
        "transport": "stdio",
        "command": command,
        "args": list(server.args),
        "env": env,
        "cwd": str(work_dir),
        "encoding_error_handler": "replace",  # a stray byte is the server's problem, not ours
        "session_kwargs": {"read_timeout_seconds": timedelta(seconds=server.timeout_seconds)},
    }


def http_connection(name: str, server: HttpServer, secrets: SecretsStore) -> dict[str, Any]:
    """The adapters' `StreamableHttpConnection` for `server` (its headers from secrets)."""
    headers = {
        header: _secret(secrets, secret, f"servers.{name}.headers.{header}")
        for header, secret in server.headers.items()
    }
    return {
        "transport": "streamable_http",
        "url": server.url,
        "headers": headers,
        "timeout": timedelta(seconds=server.timeout_seconds),
        "session_kwargs": {"read_timeout_seconds": timedelta(seconds=server.timeout_seconds)},
    }


def connection(
    name: str, server: StdioServer | HttpServer, secrets: SecretsStore, work_root: Path
) -> dict[str, Any]:
    if isinstance(server, StdioServer):
        return stdio_connection(name, server, secrets, work_root / name)
    return http_connection(name, server, secrets)
