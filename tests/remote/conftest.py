"""Fixtures for the remote worker tests: a real sshd on loopback, hosts pointing at it, and
evaluators whose pool mixes SSH hosts (and local slots)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.executor import Executor
from justkernel.workers.hosts import HostConfig
from justkernel.workers.pool import WorkerPool
from justkernel.workers.ssh.executor import SshTiming
from tests.remote.sshd import SshServer, open_folder, unavailable_reason
from tests.workers.test_evaluator_shared import shared_settings, toolchain

# The host runs the package from this checkout's environment (the loopback host has it).
WORKER_COMMAND = f"{sys.executable} -m justkernel.cli.main"
# Quick probes and heartbeats, long leases: a loaded test machine must not lose healthy hosts.
FAST = SshTiming(heartbeat_seconds=1.0, lease_seconds=30.0, probe_first=0.3, probe_max=2.0)


@pytest.fixture(scope="session")
def remote_root() -> Iterator[Path]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    root = open_folder("jk-remote-")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def sshd(remote_root: Path) -> Iterator[SshServer]:
    """One server for the session; tests that kill a server start their own."""
    folder = remote_root / "sshd"
    folder.mkdir()
    server = SshServer(folder)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shared_scratch(remote_root: Path) -> str:
    """The hosts' scratch folder shared by the session: packs cross the wire once."""
    folder = remote_root / "scratch"
    folder.mkdir(mode=0o755)
    return str(folder)


@pytest.fixture(scope="session")
def full_scratch() -> Iterator[str]:
    """A 1 MiB tmpfs as the host's scratch folder: no input pack fits."""
    folder = open_folder("jk-full-")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield str(folder)
    subprocess.run(["umount", "-l", str(folder)], check=False)
    folder.rmdir()


def host_for(server: SshServer, name: str, scratch: str, **fields: object) -> HostConfig:
    values: dict[str, object] = {
        "name": name,
        "address": "127.0.0.1",
        "port": server.port,
        "user": "root",
        "key_file": server.user_key,
        "known_hosts": "strict",
        "known_hosts_file": server.known_hosts(),
        "scratch_dir": scratch,
        "worker_command": WORKER_COMMAND,
        "min_free_mb": 4,
    }
    values.update(fields)
    return HostConfig(**values)  # type: ignore[arg-type]


def evaluator_on(executors: Sequence[Executor], settings: Settings | None = None) -> Evaluator:
    settings = settings or shared_settings()
    return Evaluator(
        settings,
        WorkerPool(executors),
        toolchain(),
        BlobStore(settings.blobs_dir),
    )
