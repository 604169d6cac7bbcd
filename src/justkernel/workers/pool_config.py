"""Build the lab's worker pool from `hosts.toml`: local slots, SSH hosts, a Dask cluster.

Without a hosts file (or with one that only sets `[local]`) this is the plain `LocalPool` the
lab always had. With hosts, each becomes an `SshExecutor` (its password, if any, read from the
secrets store) beside a `LocalExecutor` for this machine's slots (`[local] slots = 0` makes the
lab dispatch remotely only). Late receipts go to `DATA_DIR/receipts/late/`.
"""

from __future__ import annotations

import os

from justkernel.settings.config import ConfigError, Settings
from justkernel.settings.secrets import Secret, SecretsStore
from justkernel.toolchains.protocol import Toolchain
from justkernel.toolchains.registry import Toolchains
from justkernel.workers.cache import ReceiptCache
from justkernel.workers.executor import Executor
from justkernel.workers.hosts import HostConfig, WorkersConfig, load_workers
from justkernel.workers.leases import LateReceipts, LeaseTable
from justkernel.workers.local_executor import LocalExecutor
from justkernel.workers.pool import LocalPool, WorkerPool


def default_slots() -> int:
    return max(1, min(8, os.cpu_count() or 1))


def _password(host: HostConfig, secrets: SecretsStore) -> Secret | None:
    if host.password_secret is None:
        return None
    secret = secrets.get(host.password_secret)
    if secret is None:
        raise ConfigError(
            f"hosts.{host.name}.password_secret: no secret named {host.password_secret!r} "
            f"(set it with `justkernel secrets set {host.password_secret}`)"
        )
    return secret


def build_pool(
    settings: Settings,
    toolchains: Toolchains | Toolchain,
    *,
    local_slots: int | None = None,
    config: WorkersConfig | None = None,
) -> WorkerPool:
    """The pool `hosts.toml` describes; `local_slots` overrides `[local] slots`. With hosts,
    this machine's executor runs jobs of any toolchain in `toolchains` (the runtime's cache:
    every target the lab has built)."""
    config = config or load_workers(settings.hosts_file)
    slots = local_slots if local_slots is not None else config.local.slots
    if slots is None:
        slots = default_slots()
    if not config.hosts and config.dask is None:
        return LocalPool(max(1, slots), config.local.devices)
    executors: list[Executor] = []
    if slots > 0:
        executors.append(LocalExecutor(toolchains, slots, config.local.devices))
    data = settings.resolved_data_dir
    late = LateReceipts(data / "receipts" / "late")
    cache = ReceiptCache(data / "receipts")
    leases = LeaseTable()
    secrets = SecretsStore(settings.config_dir)
    if config.hosts:
        from justkernel.workers.ssh.executor import SshExecutor

        for host in config.hosts:
            executors.append(
                SshExecutor(
                    host,
                    password=_password(host, secrets),
                    late=late,
                    cache=cache,
                    leases=leases,
                )
            )
    if config.dask is not None:
        from justkernel.workers.dask.executor import DaskExecutor

        d = config.dask
        executors.append(
            DaskExecutor(
                address=d.scheduler,
                ssh_hosts=d.ssh_hosts or None,
                slots=d.slots,
                devices=d.devices,
                toolchain=d.toolchain,
                scratch=d.scratch_dir,
                shared_packs=d.shared_packs,
            )
        )
    return WorkerPool(executors)
