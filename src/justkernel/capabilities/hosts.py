"""What each configured SSH host can do, as rows of `justkernel check`: reachable, auth ok,
toolchain found and whether its version equals this lab's, free scratch disk."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from justkernel.capabilities import Capability

if TYPE_CHECKING:
    from justkernel.settings.secrets import SecretsStore
    from justkernel.workers.host_probe import HostReport


def host_capabilities(
    hosts_file: Path,
    secrets: SecretsStore | None = None,
    lab_versions: dict[str, str] | None = None,
) -> list[Capability]:
    """Rows per configured SSH host: reachable, auth ok, toolchain found (and whether its
    version equals this lab's, which decides whether its receipts are interchangeable), free
    scratch disk. A bad hosts file is a row of its own, not a crash."""
    from justkernel.settings.config import ConfigError
    from justkernel.workers.hosts import load_hosts

    try:
        hosts = load_hosts(hosts_file)
    except ConfigError as exc:
        return [Capability("ssh hosts", False, str(exc), "remote workers", "fix the hosts file")]
    if not hosts:
        return [
            Capability(
                "ssh hosts",
                True,
                f"none configured ({hosts_file} absent or empty): local workers only",
                "remote workers",
            )
        ]
    import asyncio

    from justkernel.workers.host_probe import probe_hosts

    passwords, rows = _host_passwords(hosts, secrets)
    reports = asyncio.run(probe_hosts(hosts, passwords))
    if lab_versions is None:
        lab_versions = _lab_versions()
    for report in reports:
        rows += _host_rows(report, lab_versions)
    return rows


def _lab_versions() -> dict[str, str]:
    """This lab's toolchain versions, to tell whether a host's receipts are interchangeable."""
    try:
        from justkernel.toolchains.cpu import CpuToolchain

        versions = {"cpu": CpuToolchain().version}
    except Exception:
        return {}
    try:
        from justkernel.toolchains.ascendc_cpu import AscendcCpuToolchain

        versions["ascendc-cpu"] = AscendcCpuToolchain().version
    except Exception:
        pass
    return versions


def _same_as_lab(toolchain: dict, lab_versions: dict[str, str]) -> str:
    lab = lab_versions.get(toolchain["id"])
    if lab is None:
        return ""
    if lab == toolchain["version"]:
        return " (same as this lab)"
    return f" (this lab runs {lab}: receipts from this host are not interchangeable)"


def _host_passwords(hosts: list, secrets: SecretsStore | None) -> tuple[dict, list[Capability]]:
    """Passwords by host name from the secrets store; a missing secret is a row."""
    passwords: dict = {}
    rows: list[Capability] = []
    for host in hosts:
        if host.password_secret is None:
            continue
        if secrets is None:
            from justkernel.settings.config import load_settings
            from justkernel.settings.secrets import SecretsStore as Store

            secrets = Store(load_settings().config_dir)
        secret = secrets.get(host.password_secret)
        if secret is None:
            rows.append(
                Capability(
                    f"host {host.name} password",
                    False,
                    f"no secret named {host.password_secret!r} in the secrets store",
                    "remote workers",
                    f"justkernel secrets set {host.password_secret}",
                )
            )
        passwords[host.name] = secret
    return passwords, rows


def _host_rows(report: HostReport, lab_versions: dict[str, str]) -> list[Capability]:
    from justkernel.workers.host_probe import NOT_PROBED

    host = report.host
    need = "remote workers"
    where = f"{host.user}@{host.address}:{host.port} ({host.toolchain}, {host.slots} slots)"
    rows = [
        Capability(
            f"host {host.name}",
            report.reachable is None,
            where if report.reachable is None else f"{where}: {report.reachable}",
            need,
            "" if report.reachable is None else "check the address, port and that sshd runs",
        )
    ]
    skipped = "not probed: an earlier step failed"
    auth_ok = report.auth is None
    rows.append(
        Capability(
            f"host {host.name} auth",
            auth_ok,
            f"host {host.name}: logged in as {host.user}"
            if auth_ok
            else f"host {host.name}: {skipped if report.auth == NOT_PROBED else report.auth}",
            need,
            "" if auth_ok else "check key_file / password_secret and known_hosts",
        )
    )
    tc = report.toolchain
    if tc is not None and report.toolchain_error is None:
        same = _same_as_lab(tc, lab_versions)
        facts = ", ".join(str(v) for v in tc.get("facts", {}).values())
        detail = f"host {host.name}: {tc['id']} {tc['version']}{same}; {facts}"
        rows.append(Capability(f"host {host.name} toolchain", True, detail, need))
    else:
        error = report.toolchain_error
        rows.append(
            Capability(
                f"host {host.name} toolchain",
                False,
                f"host {host.name}: {skipped if error == NOT_PROBED else error}",
                need,
                "" if error == NOT_PROBED else "set worker_command to the host's justkernel",
            )
        )
    disk_ok = report.disk_error is None
    free = "" if report.free_bytes is None else f"{report.free_bytes / (1 << 20):,.0f} MiB free"
    rows.append(
        Capability(
            f"host {host.name} disk",
            disk_ok,
            f"host {host.name}: {host.scratch_dir} {free}"
            if disk_ok
            else f"host {host.name}: "
            f"{skipped if report.disk_error == NOT_PROBED else report.disk_error}",
            need,
            "" if disk_ok else "free space in scratch_dir or point it elsewhere",
        )
    )
    return rows
