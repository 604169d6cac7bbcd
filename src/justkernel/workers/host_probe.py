"""What `justkernel check` asks each configured SSH host: reachable, auth ok, toolchain found
(and at which version), free scratch disk. Each answer is a sentence naming the host."""

from __future__ import annotations

import asyncio
import json
import shlex
from dataclasses import dataclass
from typing import Any

import asyncssh

from justkernel.settings.secrets import Secret
from justkernel.workers.executor import HostUnavailable
from justkernel.workers.hosts import HostConfig, tcp_reachable
from justkernel.workers.ssh.code_bundle import worker_command
from justkernel.workers.ssh.transport import MiB, connect

NOT_PROBED = "not probed"


@dataclass
class HostReport:
    host: HostConfig
    reachable: str | None = None  # None: ok; else why not
    auth: str | None = NOT_PROBED
    toolchain: dict[str, Any] | None = None
    toolchain_error: str | None = NOT_PROBED
    free_bytes: int | None = None
    disk_error: str | None = NOT_PROBED


async def probe_host(
    host: HostConfig, password: Secret | None = None, *, connect_seconds: float = 5.0
) -> HostReport:
    report = HostReport(host)
    report.reachable = await asyncio.to_thread(tcp_reachable, host.address, host.port)
    if report.reachable is not None:
        return report
    try:
        conn = await connect(host, password, connect_seconds=connect_seconds)
    except HostUnavailable as exc:
        report.auth = exc.reason
        return report
    report.auth = None
    command = "worker info"
    try:
        prefix = await worker_command(host, conn)
        command = (
            f"{prefix} info --scratch {shlex.quote(host.scratch_dir)} --toolchain {host.toolchain}"
        )
        result = await asyncio.wait_for(conn.run(command, check=False), 120)
    except HostUnavailable as exc:
        report.toolchain_error = exc.reason
        return report
    except (TimeoutError, OSError, asyncssh.Error) as exc:
        report.toolchain_error = f"`{command}` did not answer: {exc}"
        return report
    finally:
        conn.close()
    if result.exit_status != 0:
        lines = str(result.stderr or "").strip().splitlines() or ["no output"]
        report.toolchain_error = f"`{command}` exited {result.exit_status}: {lines[-1]}"
        return report
    info = json.loads(str(result.stdout))
    report.toolchain = info.get("toolchain")
    report.toolchain_error = info.get("toolchain_error")
    report.free_bytes = info.get("free_bytes")
    need = host.min_free_mb * MiB
    if report.free_bytes is None:
        report.disk_error = info.get("disk_error", "free space unknown")
    elif report.free_bytes < need:
        report.disk_error = (
            f"scratch {host.scratch_dir} has {report.free_bytes / MiB:.1f} MiB free, "
            f"min_free_mb is {host.min_free_mb}"
        )
    else:
        report.disk_error = None
    return report


async def probe_hosts(
    hosts: list[HostConfig], passwords: dict[str, Secret | None], **kwargs: Any
) -> list[HostReport]:
    return list(
        await asyncio.gather(*(probe_host(h, passwords.get(h.name), **kwargs) for h in hosts))
    )
