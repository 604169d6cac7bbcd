"""Start the real `justkernel serve` in a subprocess on a free loopback port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

LINK_RE = re.compile(r"Open the dashboard: (http://\S+/auth/bootstrap\?token=(\S+))")


@dataclass
class RunningServer:
    process: subprocess.Popen[str]
    base_url: str
    link: str
    token: str
    output: list[str]


def server_env(data_dir: Path, config_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "JUSTKERNEL_DATA_DIR": str(data_dir),
            "JUSTKERNEL_CONFIG_DIR": str(config_dir),
            "PYTHONUNBUFFERED": "1",
            **extra,
        }
    )
    return env


def export_run(data_dir: Path, config_dir: Path, run_id: str, bundle: Path) -> Path:
    """`justkernel export RUN --output BUNDLE` as a user runs it; the bundle written."""
    exported = subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "export", run_id, "--output", str(bundle)],
        env=server_env(data_dir, config_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    assert bundle.stat().st_size > 0
    return bundle


def spawn(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen[str]:
    """A child as the tests start a server or a run: its output as text (stderr folded in) on
    a pipe, in a session of its own, so `os.killpg` stops it with everything it started."""
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def read_until(
    process: subprocess.Popen[str],
    output: list[str],
    pattern: re.Pattern[str],
    timeout: float = 60,
    what: str = "server",
) -> str:
    """Read the process's stdout (kept in `output`) until `pattern` matches; its group 1."""
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            if process.poll() is not None:
                raise RuntimeError(f"{what} exited early:\n" + "".join(output))
            continue
        output.append(line)
        match = pattern.search(line)
        if match:
            return match.group(1)
    raise TimeoutError(f"{what} never printed {pattern.pattern!r}:\n" + "".join(output))


def wait_for_link(process: subprocess.Popen[str], output: list[str], timeout: float = 60) -> str:
    return read_until(process, output, LINK_RE, timeout)


@contextmanager
def running_server(
    data_dir: Path, config_dir: Path, *args: str, **env_extra: str
) -> Iterator[RunningServer]:
    argv = [sys.executable, "-m", "justkernel.cli.main", "serve", "--port", "0", *args]
    process = spawn(argv, server_env(data_dir, config_dir, **env_extra))
    output: list[str] = []
    try:
        link = wait_for_link(process, output)
        base, token = link.split("/auth/bootstrap?token=")
        wait_healthy(f"{base}/health")
        yield RunningServer(process, base, link, token, output)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@contextmanager
def folder_server(folder: Path, *args: str, **env_extra: str) -> Iterator[RunningServer]:
    """`justkernel serve` with its data, config, models and hosts files all under `folder`."""
    with running_server(
        folder / "data",
        folder / "config",
        *args,
        JUSTKERNEL_MODELS_LOCAL_FILE=str(folder / "models.local.toml"),
        JUSTKERNEL_HOSTS_FILE=str(folder / "hosts.toml"),
        JUSTKERNEL_LOG_LEVEL="warning",
        **env_extra,
    ) as running:
        yield running


def start_demo(home: Path, env: dict[str, str], speed: int) -> subprocess.Popen[str]:
    """`justkernel demo` on a free port, run from `home` with exactly `env`, in its own session
    (stop it with os.killpg); its output, the one-time link first, on stdout."""
    argv = [sys.executable, "-m", "justkernel.cli.main", "demo", "--port", "0"]
    return spawn([*argv, "--speed", str(speed)], env, cwd=home)


def wait_healthy(health_url: str, timeout: float = 30) -> None:
    """Poll `health_url` (a lab's `/health`, a judge's `/api/health`) until it answers 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(health_url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{health_url} never answered")


def assert_gone(pid: int, what: str) -> None:
    """`pid` no longer runs (a child the lab started must not outlive it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    raise AssertionError(f"{what} (pid {pid}) is still running")
