"""Where jobs run, configured in `hosts.toml` (path from `JUSTKERNEL_HOSTS_FILE`).

    [local]                      # this machine (optional; default: one slot per core, max 8)
    slots = 2
    devices = 0

    [hosts.npu1]                 # an SSH host (see docs/workers.md for every field)
    address = "10.0.0.5"
    user = "lab"
    key_file = "~/.ssh/id_ed25519"
    slots = 4
    devices = 1
    worker_command = "/opt/justkernel/.venv/bin/justkernel"

    [dask]                       # an existing Dask cluster instead of (or beside) SSH hosts
    scheduler = "tcp://10.0.0.9:8786"

Passwords are never in this file: a host names the secret (`password_secret`) that holds one.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from justkernel.core.targets import ToolchainId
from justkernel.settings.config import ConfigError

# an RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens
_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


def host_address(value: str) -> str:
    """`value` when it is an IP literal or a host name, else ValueError. The address goes on
    ssh's command line: nothing else (spaces, `;`, a leading `-` read as an option) may pass."""
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    if not _HOSTNAME.match(value):
        raise ValueError("must be a host name or an IP address")
    return value


class HostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    address: str = Field(min_length=1)
    port: int = Field(default=22, ge=1, le=65535)
    # a POSIX login name (no leading `-`: ssh would read it as an option)
    user: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$")
    key_file: Path | None = None
    password_secret: str | None = None
    known_hosts: Literal["strict", "accept-new"] = "strict"
    known_hosts_file: Path | None = None  # default ~/.ssh/known_hosts
    slots: int = Field(default=1, ge=1, le=8)
    devices: int = Field(default=0, ge=0, le=64)
    toolchain: ToolchainId = "cpu"
    scratch_dir: str = "/tmp/justkernel"
    worker_command: str = "justkernel"  # how to start the CLI on the host
    bundle_python: str | None = None  # set: ship the self-contained worker, run it with this
    min_free_mb: int = Field(default=64, ge=0)  # free scratch a job needs besides its packs

    @field_validator("address")
    @classmethod
    def _address(cls, value: str) -> str:
        return host_address(value)


class LocalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slots: int | None = Field(default=None, ge=0, le=64)  # None: one per core, at most 8
    devices: int = Field(default=0, ge=0, le=64)


class DaskConfig(BaseModel):
    """An existing scheduler (`scheduler`), or a cluster Dask starts over SSH (`ssh_hosts`,
    the first host runs the scheduler)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scheduler: str | None = None
    ssh_hosts: list[str] = Field(default_factory=list)
    slots: int = Field(default=4, ge=1, le=512)  # jobs the lab keeps in flight on the cluster
    devices: int = Field(default=0, ge=0)  # device lanes = worker resource "device"
    toolchain: ToolchainId = "cpu"
    scratch_dir: str = "/tmp/justkernel-dask"
    shared_packs: bool = False  # the lab's pack folder is visible on the workers at its path

    @model_validator(mode="after")
    def _one_way(self) -> DaskConfig:
        if bool(self.scheduler) == bool(self.ssh_hosts):
            raise ValueError("set exactly one of scheduler or ssh_hosts")
        return self


class WorkersConfig(BaseModel):
    local: LocalConfig = Field(default_factory=LocalConfig)
    hosts: list[HostConfig] = Field(default_factory=list)
    dask: DaskConfig | None = None


def _problems(path: Path, prefix: str, exc: ValidationError) -> ConfigError:
    text = "; ".join(
        f"{prefix}{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
    )
    return ConfigError(f"{path}: {text}")


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def _hosts(path: Path, data: dict[str, Any]) -> list[HostConfig]:
    hosts = []
    for name, body in (data.get("hosts") or {}).items():
        if not isinstance(body, dict):
            raise ConfigError(f"{path}: hosts.{name} must be a table")
        try:
            hosts.append(HostConfig(name=name, **body))
        except ValidationError as exc:
            raise _problems(path, f"hosts.{name}.", exc) from exc
    return hosts


def load_hosts(path: Path) -> list[HostConfig]:
    """Hosts from the file; a missing file means no hosts. Errors name the file and key."""
    return _hosts(path, _read(path))


def load_workers(path: Path) -> WorkersConfig:
    """Local slots, SSH hosts and the Dask cluster from the file (all optional)."""
    data = _read(path)
    hosts = _hosts(path, data)
    sections: dict[str, Any] = {}
    for key, model in (("local", LocalConfig), ("dask", DaskConfig)):
        body = data.get(key)
        if body is None:
            continue
        if not isinstance(body, dict):
            raise ConfigError(f"{path}: {key} must be a table")
        try:
            sections[key] = model(**body)
        except ValidationError as exc:
            raise _problems(path, f"{key}.", exc) from exc
    return WorkersConfig(hosts=hosts, **sections)


def tcp_reachable(address: str, port: int, timeout: float = 3.0) -> str | None:
    """None when a TCP connection opens, else the reason it did not."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)
