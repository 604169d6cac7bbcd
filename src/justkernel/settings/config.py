"""Lab settings from `JUSTKERNEL_*` environment variables and `.env`.

Every setting has an embedded default that needs no network, no keys and no special hardware,
so `./start.sh` works on a laptop; `.env.example` documents each one.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from justkernel.core.targets import DEFAULT_TOOLCHAIN, ToolchainId
from justkernel.settings import redaction
from justkernel.settings.provider_keys import ProviderKeys


class ConfigError(Exception):
    """A configuration file or variable is invalid; the message names the source and the key."""


def _default_config_dir() -> Path:
    """Per-user config folder (XDG), outside any repository, for the secrets store."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "justkernel"


def _default_cache_dir() -> Path:
    """Per-user cache folder (XDG): the toolchains' trusted artefacts are built once per
    machine there, not once per data folder."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "justkernel"


class Settings(BaseSettings):
    """Process-wide settings. Paths are resolved once so every part agrees on them."""

    model_config = SettingsConfigDict(
        env_prefix="JUSTKERNEL_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="forbid",
        arbitrary_types_allowed=True,  # ProviderKeys: parsed here, its values never shown
    )

    data_dir: Path = Field(
        default=Path(".justkernel"),
        description="Database, workspaces, blobs and logs live here.",
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy async URL; empty means SQLite at DATA_DIR/justkernel.db.",
    )
    config_dir: Path = Field(
        default_factory=_default_config_dir,
        description="Per-user folder for the encrypted secrets store (outside the repo).",
    )
    cache_dir: Path = Field(
        default_factory=_default_cache_dir,
        description="Per-user folder for the toolchains' trusted artefacts (cpu harness.o, "
        "ascendc-cpu main.o, precompiled headers, object cache), shared by every data folder.",
    )
    toolchain: ToolchainId = Field(
        default=DEFAULT_TOOLCHAIN,
        description="The default target of a new run: ascendc-cpu (the contest's Ascend C "
        "project, needs g++ >= 12), cpu (the C port) or cann (a CANN host).",
    )
    host: str = Field(default="127.0.0.1", description="Address the web server binds to.")
    port: int = Field(default=4173, ge=0, le=65535, description="Port of the web server.")
    public_host: str | None = Field(
        default=None,
        description="Host name remote browsers use (with --allow-remote); the lab answers only "
        "to it and to loopback, and names it in links and A2A agent cards.",
    )
    api_token: str | None = Field(
        default=None,
        description="Bearer token for scripts and remote browsers; required to bind off loopback.",
    )
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    export_max_bytes: int = Field(
        default=512 * 1024 * 1024,
        gt=0,
        description="Largest bundle (compressed or unpacked) that `import` accepts.",
    )
    import_max_events: int = Field(
        default=200_000,
        gt=0,
        description="Most events an imported bundle may hold (each becomes a row of the store).",
    )
    hosts_file: Path = Field(
        default=Path("hosts.toml"),
        description="Remote worker hosts (SSH); a missing file means local workers only.",
    )
    models_local_file: Path = Field(
        default=Path("models.local.toml"),
        description="User model presets, written by the dashboard; gitignored.",
    )
    judge: Literal["local", "official", "off"] = Field(
        default="local",
        description="Where the Judger submits: the local judge-server (started on demand), "
        "the official site (judge.toml + secret judge_official_token), or off.",
    )
    judge_dir: Path | None = Field(
        default=None,
        description="The local judge's private folder; empty means CONFIG_DIR/judge.",
    )
    judge_url: str | None = Field(
        default=None,
        description="URL of a local judge-server already running; empty starts one on demand.",
    )
    judge_file: Path = Field(
        default=Path("judge.toml"),
        description="The official judge client's settings ([official] table).",
    )

    provider_keys: ProviderKeys = Field(
        default_factory=ProviderKeys,
        repr=False,
        exclude=True,
        description="JSON object provider → key, for presets with no stored key (a plain "
        'key goes to the provider\'s own addresses; {"key": ..., "base_url": ...} to one).',
    )

    @field_validator("provider_keys", mode="before")
    @classmethod
    def _provider_keys(cls, value: object) -> object:
        """Parsed at load, so a malformed variable stops the program naming the problem."""
        if value is None or isinstance(value, str):
            return ProviderKeys.parse(value)
        return value

    @field_validator("cache_dir", mode="before")
    @classmethod
    def _cache_default(cls, value: object) -> object:
        """An empty `JUSTKERNEL_CACHE_DIR=` (as `.env.example` shows it) means the default."""
        return _default_cache_dir() if value in (None, "") else value

    @field_validator("database_url")
    @classmethod
    def _known_backend(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not value.startswith(("sqlite+aiosqlite://", "postgresql+asyncpg://")):
            raise ValueError(
                "must start with sqlite+aiosqlite:// or postgresql+asyncpg:// "
                f"(got {value.split('://')[0]}://...)"
            )
        return value

    @field_validator("public_host")
    @classmethod
    def _host_name(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not re.fullmatch(r"[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]", value):
            raise ValueError("a host name or address, without scheme or port ([::1] for IPv6)")
        return value

    @field_validator("api_token")
    @classmethod
    def _redacted(cls, value: str | None) -> str | None:
        """The token may come from .env, not the environment: make it known to the scrubber."""
        redaction.register(value)
        return value

    @property
    def resolved_judge_dir(self) -> Path:
        return (self.judge_dir or self.config_dir / "judge").expanduser().resolve()

    @property
    def resolved_data_dir(self) -> Path:
        return self.data_dir.expanduser().resolve()

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.resolved_data_dir / 'justkernel.db'}"

    @property
    def toolchains_dir(self) -> Path:
        """`<cache_dir>/toolchains`: one folder per toolchain id below it."""
        return self.cache_dir.expanduser().resolve() / "toolchains"

    @property
    def blobs_dir(self) -> Path:
        return self.resolved_data_dir / "blobs"

    @property
    def logs_dir(self) -> Path:
        return self.resolved_data_dir / "logs"

    @property
    def workspaces_dir(self) -> Path:
        return self.resolved_data_dir / "workspaces"

    def ensure_dirs(self) -> None:
        """Create the data folders; the secrets folder is created by the secrets store."""
        for folder in (self.resolved_data_dir, self.blobs_dir, self.logs_dir, self.workspaces_dir):
            folder.mkdir(parents=True, exist_ok=True)


def load_settings(**overrides: object) -> Settings:
    """Build settings, turning pydantic's errors into one message naming each bad key."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(part) for part in err["loc"]) or "(settings)"
            env_name = f"JUSTKERNEL_{key.upper()}"
            problems.append(f"{env_name}: {err['msg']}")
        raise ConfigError(
            "invalid settings (environment or .env):\n  " + "\n  ".join(problems)
        ) from None
