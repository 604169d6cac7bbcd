"""Keeps `justkernel serve` alive: restarts it after a crash with backoff and says why.

The supervisor owns the listening port and the bootstrap token, so the link it printed keeps
working across restarts; the child serves on the inherited socket.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

log = logging.getLogger("justkernel.supervisor")

BACKOFF_START = 1.0
BACKOFF_MAX = 30.0
HEALTHY_AFTER = 60.0  # a child that ran this long resets the backoff


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def supervise(
    child_argv: list[str],
    *,
    env: dict[str, str],
    pass_fds: tuple[int, ...] = (),
    say: Callable[[str], None] = print,
) -> int:
    """Run the child until it exits cleanly (code 0) or we are told to stop."""
    stopping = False
    child: subprocess.Popen[bytes] | None = None

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    backoff = BACKOFF_START
    while True:
        started = time.monotonic()
        child = subprocess.Popen(child_argv, env=env, pass_fds=pass_fds)
        say(f"supervisor: server started (pid {child.pid})")
        code = child.wait()
        if stopping or code == 0:
            say(f"supervisor: server {describe_exit(code)}; stopping")
            return 0 if stopping else code
        if time.monotonic() - started >= HEALTHY_AFTER:
            backoff = BACKOFF_START
        say(f"supervisor: server {describe_exit(code)}; restarting in {backoff:.0f} s")
        deadline = time.monotonic() + backoff
        while time.monotonic() < deadline and not stopping:
            time.sleep(0.1)
        if stopping:
            return 0
        backoff = min(backoff * 2, BACKOFF_MAX)


def child_command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "justkernel.cli.main", *args]


def child_env(token: str, fd: int) -> dict[str, str]:
    env = dict(os.environ)
    env["JUSTKERNEL_BOOTSTRAP_TOKEN"] = token
    env["JUSTKERNEL_LISTEN_FD"] = str(fd)
    return env
