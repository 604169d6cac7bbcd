"""A lab killed with SIGKILL takes its running sandboxes along.

Attack (issue 11, finding 10): the sandbox chain runs in a session of its own, so when the lab
died by SIGKILL (an OOM kill, a crash, `kill -9`) nothing told it to stop: a kernel kept
running, and holding its pool uid, until its own CPU and wall limits ran out. Here a child
Python process starts a long sandboxed run, the test SIGKILLs that child, and every process
the child had started (reaper, prlimit/setpriv, bwrap, the program) must be gone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from justkernel.toolchains.sandbox import SandboxUnavailable, find_tools
from tests.support.server import assert_gone

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[2]
LAB = """
import asyncio, sys
from pathlib import Path
from justkernel.toolchains.sandbox import SandboxLimits, run_sandboxed

limits = SandboxLimits(wall_seconds=900, cpu_seconds=900)
asyncio.run(run_sandboxed(["/usr/bin/sleep", sys.argv[2]], rw_dir=Path(sys.argv[1]), limits=limits))
"""


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name, or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def descendants(root: int) -> set[int]:
    """Host pids of every process below `root` (all pid namespaces: /proc shows them all)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (fields := _stat(int(name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def running_with(argv: list[str]) -> list[int]:
    want = "\0".join(argv).encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and Path(f"/proc/{name}/cmdline").read_bytes() == want:
                found.append(int(name))
        except OSError:
            continue
    return found


def wait_until_dead(pids: set[int], seconds: float) -> set[int]:
    """Those of `pids` still running (not zombies) when all died or `seconds` ran out."""
    deadline = time.monotonic() + seconds
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        alive = {p for p in alive if (fields := _stat(p)) is not None and fields[0] != "Z"}
        time.sleep(0.05)
    return alive


def test_sigkill_of_the_lab_kills_its_sandboxes() -> None:
    try:
        find_tools()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    out = Path(tempfile.mkdtemp(prefix="jk-orphans-"))
    out.chmod(0o755)
    program = ["/usr/bin/sleep", f"{uuid.uuid4().int % 10**6 + 600}.{os.getpid()}"]
    lab = subprocess.Popen(
        [sys.executable, "-c", LAB, str(out), program[1]], cwd=REPO, stderr=subprocess.PIPE
    )
    born: dict[int, str] = {}  # pid -> start time, to kill only these on the way out
    try:
        deadline = time.monotonic() + 60
        while not running_with(program):
            assert lab.poll() is None, lab.stderr.read().decode() if lab.stderr else ""
            assert time.monotonic() < deadline, "the sandboxed program never started"
            time.sleep(0.05)
        chain = descendants(lab.pid)
        born = {pid: fields[19] for pid in chain if (fields := _stat(pid)) is not None}
        assert set(running_with(program)) <= chain and len(chain) >= 3  # reaper, bwrap, sleep
        lab.send_signal(signal.SIGKILL)
        lab.wait()
        # The kernel delivers the death signals at once; the wait only bounds a broken fix.
        left = wait_until_dead(chain, 30)
        for pid in sorted(left):
            assert_gone(pid, f"sandbox process {Path(f'/proc/{pid}/cmdline').read_bytes()!r}")
    finally:
        if lab.poll() is None:
            lab.kill()
            lab.wait()
        for pid, started in born.items():  # leave nothing behind, even when failing
            if (fields := _stat(pid)) is not None and fields[19] == started:  # not a reused pid
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(out, ignore_errors=True)
