"""A real PostgreSQL server for tests, of any installed version, on a temp folder and a free port.

The binaries are the ones `justkernel check` reports (`justkernel.capabilities`): on PATH, else
Debian's /usr/lib/postgresql/<major>/bin, newest first.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from justkernel.capabilities import postgres_bin_dir, postgres_capability


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_unavailable_reason() -> str | None:
    cap = postgres_capability()
    return None if cap.present else f"{cap.detail} ({cap.fix})"


def _bin_dir() -> Path:
    folder = postgres_bin_dir()
    if folder is None:
        raise RuntimeError(postgres_unavailable_reason())
    return folder


def _as_postgres(argv: list[str]) -> list[str]:
    """initdb refuses to run as root, so as root we run it as the `postgres` user."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def postgres_server(bin_dir: Path | None = None) -> Iterator[str]:
    """Yield a base URL `postgresql+asyncpg://postgres@127.0.0.1:PORT` of a fresh cluster."""
    bin_dir = bin_dir or _bin_dir()
    folder = Path(tempfile.mkdtemp(prefix="jk-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    port = free_port()
    subprocess.run(
        _as_postgres([str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {folder} -h 127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(
        _as_postgres(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-w",
                "-l",
                str(folder / "log"),
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_postgres([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


def create_database(base_url: str, name: str, bin_dir: Path | None = None) -> None:
    """CREATE DATABASE through PostgreSQL's `createdb` client (trust auth on loopback)."""
    host_port = base_url.rsplit("@", 1)[1]
    host, port = host_port.split(":")
    subprocess.run(
        [str((bin_dir or _bin_dir()) / "createdb"), "-h", host, "-p", port, "-U", "postgres", name],
        check=True,
        capture_output=True,
    )
