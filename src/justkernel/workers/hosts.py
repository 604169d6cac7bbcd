"""Remote worker hosts, configured in `hosts.toml` (path from `JUSTKERNEL_HOSTS_FILE`).

Passwords are never in this file: a host names the secret (`password_secret`) that holds one.
"""

from __future__ import annotations

import socket
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from justkernel.settings.config import ConfigError


class HostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    address: str = Field(min_length=1)
    port: int = Field(default=22, ge=1, le=65535)
    user: str = Field(min_length=1)
    key_file: Path | None = None
    password_secret: str | None = None
    known_hosts: Literal["strict", "accept-new"] = "strict"
    slots: int = Field(default=1, ge=1, le=8)
    devices: int = Field(default=0, ge=0, le=64)
    toolchain: Literal["cpu", "cann"] = "cpu"
    scratch_dir: str = "/tmp/justkernel"


def load_hosts(path: Path) -> list[HostConfig]:
    """Hosts from the file; a missing file means no hosts. Errors name the file and key."""
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    hosts = []
    for name, body in (data.get("hosts") or {}).items():
        if not isinstance(body, dict):
            raise ConfigError(f"{path}: hosts.{name} must be a table")
        try:
            hosts.append(HostConfig(name=name, **body))
        except ValidationError as exc:
            problems = "; ".join(
                f"hosts.{name}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                for e in exc.errors()
            )
            raise ConfigError(f"{path}: {problems}") from exc
    return hosts


def tcp_reachable(address: str, port: int, timeout: float = 3.0) -> str | None:
    """None when a TCP connection opens, else the reason it did not."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)
