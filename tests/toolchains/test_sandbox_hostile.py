"""Hostile programs run through the real sandbox: each gets the right status, harms nothing."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from pathlib import Path

import pytest

from justkernel.toolchains.sandbox import (
    SandboxLimits,
    SandboxResult,
    SandboxStatus,
    run_sandboxed,
)

pytestmark = pytest.mark.timeout(60)


async def run(bin_dir: Path, work: Path, prog: str, *args: str, **limits: object) -> SandboxResult:
    return await run_sandboxed(
        [f"/sandbox/bin/{prog}", *args],
        ro_binds={"bin": bin_dir, "in": work / "in"},
        rw_dir=work / "out",
        limits=SandboxLimits(**limits),  # type: ignore[arg-type]
    )


def marker() -> str:
    """A unique extra argument: every process of that run (fork children too) carries it."""
    return f"jk-marker-{uuid.uuid4().hex}"


def leftovers(mark: str) -> list[int]:
    """Host pids of processes that carry `mark` on their command line.

    Not by uid: other test sessions on this host may lease the same pool uid right after.
    """
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if mark.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
        except OSError:
            continue
    return found


async def test_endless_loop_times_out_and_nothing_survives(hostile_bin: Path, work: Path) -> None:
    mark = marker()
    r = await run(hostile_bin, work, "loop", mark, wall_seconds=0.3)
    assert r.status is SandboxStatus.TIMEOUT
    assert r.wall_seconds >= 0.3  # not killed before its limit (how soon after: bench/latency.py)
    assert r.cpu_seconds is not None and 0 < r.cpu_seconds <= r.wall_seconds + 0.05  # measured
    assert leftovers(mark) == []


async def test_cpu_limit_is_a_resource_limit(hostile_bin: Path, work: Path) -> None:
    r = await run(hostile_bin, work, "loop", cpu_seconds=1, wall_seconds=20)
    assert r.status is SandboxStatus.RESOURCE_LIMIT
    assert (r.resource, r.signal_name) == ("cpu", "SIGXCPU")
    assert r.cpu_seconds is not None and r.cpu_seconds > 0.5


async def test_fork_bomb_is_contained_and_nothing_survives(hostile_bin: Path, work: Path) -> None:
    mark = marker()
    r = await run(hostile_bin, work, "forkbomb", mark, wall_seconds=0.6, processes=32)
    assert r.status is SandboxStatus.TIMEOUT
    assert "fork limited" in r.stdout.text  # RLIMIT_NPROC refused forks
    assert leftovers(mark) == []
    host = await asyncio.create_subprocess_exec("true")
    assert await host.wait() == 0  # the host can still fork


async def test_network_is_unreachable(hostile_bin: Path, work: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        r = await run(hostile_bin, work, "netconnect", str(port))
        assert (r.status, r.exit_code) == (SandboxStatus.OK, 0), r.stdout.text
        assert "connect:" in r.stdout.text  # it tried and was refused inside
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever reached the host


async def test_files_outside_the_sandbox_are_unreadable(hostile_bin: Path, work: Path) -> None:
    secret = work / "secret.txt"  # readable by anyone on the host, but not bound
    secret.write_text("top secret\n")
    secret.chmod(0o644)
    (work / "in" / "input.txt").write_text("input\n")
    (work / "in" / "input.txt").chmod(0o644)
    targets = ["/etc/shadow", "/etc/passwd", str(secret), "/proc/1/root/etc/shadow", "/root"]
    r = await run(hostile_bin, work, "tryfiles", "r", "/sandbox/in/input.txt", *targets)
    assert r.exit_code == 1, r.stdout.text  # only the bound input was readable
    assert "OK /sandbox/in/input.txt" in r.stdout.text
    for t in targets:
        assert f"FAIL {t}:" in r.stdout.text


async def test_only_the_output_folder_is_writable(hostile_bin: Path, work: Path) -> None:
    host_tmp = Path("/tmp") / f"jk-sandbox-escape-{uuid.uuid4().hex}"
    host_in = work / "in" / "host-path.txt"
    forbidden = ["/sandbox/in/x", "/sandbox/bin/x", "/sandbox/x", "/usr/x", "/x", "/dev/x"]
    forbidden += [str(host_in)]
    r = await run(
        hostile_bin, work, "tryfiles", "w", "/sandbox/out/ok.txt", str(host_tmp), *forbidden
    )
    out = r.stdout.text
    assert "OK /sandbox/out/ok.txt" in out
    assert f"OK {host_tmp}" in out  # the sandbox's private /tmp ...
    assert not host_tmp.exists()  # ... is not the host's
    for path in forbidden:
        assert f"FAIL {path}:" in out
    assert r.exit_code == 2
    assert list((work / "in").iterdir()) == []
    written = work / "out" / "ok.txt"
    assert written.read_text() == "pwned\n"
    assert written.stat().st_uid == os.getuid()  # handed back to the folder's owner
    assert (work / "out").stat().st_uid == os.getuid()


async def test_huge_allocation_fails_cleanly(hostile_bin: Path, work: Path) -> None:
    r = await run(hostile_bin, work, "bigalloc")
    assert r.status in (SandboxStatus.CRASHED, SandboxStatus.RESOURCE_LIMIT)
    assert "malloc(64 GiB) = (nil)" in r.stderr.text  # refused by RLIMIT_AS, not overcommitted


async def test_out_of_bounds_write_crashes(hostile_bin: Path, work: Path) -> None:
    r = await run(hostile_bin, work, "segv")
    assert r.status is SandboxStatus.CRASHED
    assert r.signal_name == "SIGSEGV"
    assert r.exit_code is None


async def test_file_size_limit(hostile_bin: Path, work: Path) -> None:
    r = await run(hostile_bin, work, "bigfile", file_size_bytes=2 << 20)
    assert r.status is SandboxStatus.RESOURCE_LIMIT
    assert (r.resource, r.signal_name) == ("file_size", "SIGXFSZ")
    assert (work / "out" / "big").stat().st_size <= 2 << 20


async def test_traps_in_the_output_are_removed(hostile_bin: Path, work: Path) -> None:
    r = await run(hostile_bin, work, "outlinks")
    assert "planted 4 traps" in r.stdout.text
    assert r.status is SandboxStatus.SANDBOX_VIOLATION
    assert sorted(r.violations) == [
        "setuid/setgid file in output: suid",
        "special file created in output: pipe",
        "symlink created in output: hidden/link",
        "symlink created in output: result.txt",
    ]
    out = work / "out"
    assert sorted(p.name for p in out.iterdir()) == ["hidden", "suid"]
    assert list((out / "hidden").iterdir()) == []
    assert not (out / "suid").stat().st_mode & 0o6000


async def test_namespace_escape_is_killed_by_seccomp(hostile_bin: Path, work: Path) -> None:
    r = await run(hostile_bin, work, "nsescape")
    assert r.status is SandboxStatus.SANDBOX_VIOLATION
    assert r.signal_name == "SIGSYS"


def program_pids(prog: str, mark: str) -> list[int]:
    """Host pids of the sandboxed program itself (argv[0] is its /sandbox path), not of the
    wrappers around it that carry the mark too."""
    argv0 = f"/sandbox/bin/{prog}".encode() + b"\0"
    found = []
    for pid in leftovers(mark):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(argv0):
                found.append(pid)
        except OSError:
            continue
    return found


async def until_forked(task: asyncio.Task[SandboxResult], mark: str) -> list[int]:
    """Wait until the fork bomb has really forked: two or more of its processes run (not a
    fixed sleep, which on a loaded machine may cancel before anything started)."""
    while len(found := program_pids("forkbomb", mark)) < 2:
        assert not task.done(), f"the fork bomb ended before it forked: {task.result()}"
        await asyncio.sleep(0.01)
    return found


async def test_cancelling_the_run_kills_everything(hostile_bin: Path, work: Path) -> None:
    mark = marker()
    task = asyncio.create_task(run(hostile_bin, work, "forkbomb", mark, wall_seconds=30))
    assert len(await until_forked(task, mark)) >= 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert leftovers(mark) == []
