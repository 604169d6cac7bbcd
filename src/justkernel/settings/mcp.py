"""MCP servers for teams, from `mcp.toml` in the config folder.

Off by default: no file, no MCP. Each server says how the lab reaches it (stdio: a command the
lab starts; streamable HTTP: a loopback or https URL), which of its tools are offered (an
explicit allow-list, never "all"), and which teams get it. Credentials are never written in
the file: a header or environment variable names a secret of the store, and only secrets named
`mcp:...` may be used, so an `mcp.toml` cannot send the judge token or a provider key to a
server of its choosing (the rule model presets follow too).

```toml
[servers.ascendc_docs]
transport = "stdio"
command = "/opt/ascendc-docs/bin/docs-mcp"
args = ["--index", "/opt/ascendc-docs/index"]
env = ["ASCEND_DOCS_LANG"]                     # copied from the lab's environment
secret_env = { DOCS_TOKEN = "mcp:docs_token" }  # variable -> secret
tools = ["search_api"]
teams = ["*"]                                   # or team names / ids
```
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from justkernel.core.addresses import is_loopback
from justkernel.settings import redaction
from justkernel.settings.config import ConfigError, Settings

MCP_FILE = "mcp.toml"
TOOL_PREFIX = "mcp"
# OpenAI-compatible function names: ^[a-zA-Z0-9_-]{1,64}$, so the namespaced name must fit
MAX_TOOL_NAME = 64
SERVER_NAME = r"^[a-z][a-z0-9_]{0,23}$"
TOOL_NAME = r"^[A-Za-z0-9_-]{1,48}$"
SECRET_PREFIX = "mcp:"
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
HEADER_NAME = re.compile(r"^[A-Za-z0-9-]{1,64}$")
ALL_TEAMS = "*"
DEFAULT_RESULT_CHARS = 20_000
MAX_RESULT_CHARS = 200_000


class McpConfigError(ConfigError, ValueError):
    """`mcp.toml` is invalid; the message names the file and the key. A ValueError as well,
    so a team whose tools cannot be built is paused with the reason, like a bad preset."""


def namespaced(server: str, tool: str) -> str:
    """The name a team sees: `mcp_<server>_<tool>`, so it can never shadow a lab tool."""
    return f"{TOOL_PREFIX}_{server}_{tool}"


def _secret_refs(value: dict[str, str], names: re.Pattern[str], what: str) -> dict[str, str]:
    """A table of `name -> secret`: each name a valid `what`, each secret an `mcp:` one."""
    for name, secret in value.items():
        if not names.match(name):
            raise ValueError(f"{name!r} is not {what}")
        if not re.fullmatch(r"mcp:[A-Za-z0-9_.-]{1,120}", secret):
            raise ValueError(f"must name a secret {SECRET_PREFIX}<name> (got {secret!r})")
    return value


class _Server(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tools: list[Annotated[str, Field(pattern=TOOL_NAME)]] = Field(min_length=1)
    teams: list[Annotated[str, Field(min_length=1, max_length=80)]] = Field(min_length=1)
    # approval modes (core.approvals): in ask mode a supervised team asks a person before
    # calling this server's tools unless this is false (read_only asks for every MCP tool)
    needs_approval: bool = True
    max_result_chars: int = Field(default=DEFAULT_RESULT_CHARS, gt=0, le=MAX_RESULT_CHARS)
    timeout_seconds: float = Field(default=60.0, gt=0, le=600)

    @field_validator("tools")
    @classmethod
    def _unique_tools(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a tool is listed twice")
        return value

    def for_team(self, team_id: str, team_name: str) -> bool:
        return any(t in (ALL_TEAMS, team_id, team_name) for t in self.teams)


class StdioServer(_Server):
    """A server the lab starts as its own process (stdin/stdout), with a scrubbed
    environment: the lab's own variables never reach it, only the names in `env` and the
    secrets in `secret_env`."""

    transport: Literal["stdio"]
    command: str = Field(min_length=1, max_length=4096)
    args: list[Annotated[str, Field(max_length=4096)]] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list)
    secret_env: dict[str, str] = Field(default_factory=dict)

    @field_validator("env")
    @classmethod
    def _plain_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable name")
            if name.upper().startswith("JUSTKERNEL_") or redaction.is_secret_name(name):
                raise ValueError(
                    f"{name!r} may hold a secret of the lab: pass secrets with secret_env"
                )
        return value

    @field_validator("secret_env")
    @classmethod
    def _secret_vars(cls, value: dict[str, str]) -> dict[str, str]:
        return _secret_refs(value, ENV_NAME, "an environment variable name")


class HttpServer(_Server):
    """A server reached over streamable HTTP: https, or plain http on loopback only (a
    plain-text hop over the network would show the team's queries and the credentials)."""

    transport: Literal["streamable_http"]
    url: str = Field(max_length=2048)
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _https_or_loopback(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL with a host")
        if parts.username or parts.password:
            raise ValueError("credentials go in headers (from secrets), not in the URL")
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            raise ValueError("plain http is allowed only on loopback; use https")
        return value

    @field_validator("headers")
    @classmethod
    def _secret_headers(cls, value: dict[str, str]) -> dict[str, str]:
        return _secret_refs(value, HEADER_NAME, "a header name")


McpServer = Annotated[StdioServer | HttpServer, Field(discriminator="transport")]


class McpConfig(BaseModel):
    """Every server of `mcp.toml`; empty when there is no file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: dict[Annotated[str, Field(pattern=SERVER_NAME)], McpServer] = Field(
        default_factory=dict
    )

    def for_team(self, team_id: str, team_name: str) -> dict[str, StdioServer | HttpServer]:
        """The servers a team gets, by name."""
        return {n: s for n, s in self.servers.items() if s.for_team(team_id, team_name)}


def mcp_file(settings: Settings) -> Path:
    return settings.config_dir.expanduser() / MCP_FILE


def _check_names(config: McpConfig) -> None:
    """Refuse a namespaced name too long for the providers, or one two entries share
    (`mcp_a_b_c` is server `a`'s `b_c` and server `a_b`'s `c`)."""
    seen: dict[str, str] = {}
    for server, body in config.servers.items():
        for tool in body.tools:
            name = namespaced(server, tool)
            where = f"servers.{server}.tools: {tool!r}"
            if len(name) > MAX_TOOL_NAME:
                raise ValueError(f"{where}: {name!r} is longer than {MAX_TOOL_NAME} characters")
            if name in seen:
                raise ValueError(f"{where}: {name!r} is also {seen[name]}")
            seen[name] = where


def parse_mcp(text: str, source: str) -> McpConfig:
    """The config in `text`; McpConfigError naming `source` and each bad key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise McpConfigError(f"{source}: not valid TOML: {exc}") from None
    try:
        config = McpConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(file)'}: {e['msg']}" for e in exc.errors()
        )
        raise McpConfigError(f"{source}: {problems}") from None
    try:
        _check_names(config)
    except ValueError as exc:
        raise McpConfigError(f"{source}: {exc}") from None
    return config


def load_mcp(settings: Settings) -> McpConfig:
    """`mcp.toml` of the config folder; no file means no server."""
    path = mcp_file(settings)
    if not path.is_file():
        return McpConfig()
    return parse_mcp(path.read_text(encoding="utf-8"), str(path))
