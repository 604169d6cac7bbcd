"""A real PostgreSQL server for tests, from Debian's package, on a temp folder and a free port."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_unavailable_reason() -> str | None:
    if not (PG_BIN / "initdb").exists():
        return f"PostgreSQL server binaries not found in {PG_BIN} (apt-get install postgresql)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "runuser not found"
    return None


def _as_postgres(argv: list[str]) -> list[str]:
    """initdb refuses to run as root, so as root we run it as the `postgres` user."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def postgres_server() -> Iterator[str]:
    """Yield a base URL `postgresql+asyncpg://postgres@127.0.0.1:PORT` of a fresh cluster."""
    folder = Path(tempfile.mkdtemp(prefix="jk-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    port = free_port()
    subprocess.run(
        _as_postgres([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {folder} -h 127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(
        _as_postgres(
            [
                str(PG_BIN / "pg_ctl"),
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
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


def create_database(base_url: str, name: str) -> None:
    """CREATE DATABASE through Debian's `createdb` client (trust auth on loopback)."""
    host_port = base_url.rsplit("@", 1)[1]
    host, port = host_port.split(":")
    subprocess.run(
        [str(PG_BIN / "createdb"), "-h", host, "-p", port, "-U", "postgres", name],
        check=True,
        capture_output=True,
    )
