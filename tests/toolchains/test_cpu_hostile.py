"""Hostile kernels through the real CPU pipeline: each gets its status and harms nothing.

Most of them reach the kernel through raw `syscall` instructions, which the default toolchain
refuses statically; these tests turn that scan off so the sandbox is what has to hold (as it
must for a kernel that finds another way, e.g. a libc gadget). Limits are short so the suite
stays quick; the statuses are the ones the defaults give.
"""

from __future__ import annotations

import os
import platform
import socket
import struct
import subprocess
import uuid
from pathlib import Path

import pytest

from justkernel.core.receipts import JobKind, Receipt, Status
from justkernel.operators import verify_input_pack
from justkernel.toolchains import CpuLimits
from justkernel.toolchains.sandbox import SandboxLimits
from tests.workers.test_evaluator_shared import (
    SMALL_CASE,
    evaluator,
    fresh_dir,
    make_project,
    own_settings,
    packs,
    require_tools,
    spec_for,
    toolchain,
)

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(platform.machine() != "x86_64", reason="raw x86_64 syscalls"),
]

LIMITS = CpuLimits(case=SandboxLimits(wall_seconds=4, cpu_seconds=1, processes=3))


async def run_hostile(
    name: str, replace: dict[str, str] | None = None, scan_syscalls: bool = False
) -> tuple[Receipt, Path]:
    """Run variant `name` as a probe on the small case; returns the receipt and its workdir."""
    require_tools()
    tc = toolchain(limits=LIMITS, scan_syscalls=scan_syscalls)
    pack_set = await packs(JobKind.PROBE)
    src = make_project(hostile=name, replace=replace)
    spec = spec_for(tc, src, pack_set, JobKind.PROBE, [SMALL_CASE])
    work = fresh_dir(name) / "work"
    return await tc.run(spec, src, pack_set, work, slot=0), work


def output0(work: Path) -> bytes:
    return (work / "cases" / SMALL_CASE / "output0.bin").read_bytes()


def codes(work: Path, n: int) -> list[int]:
    return list(struct.unpack(f"<{n}i", output0(work)[: 4 * n]))


def survivors(binary: Path) -> list[int]:
    """Host pids still running `binary` (same device and inode: the bind mount keeps both)."""
    want = os.stat(binary)
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                st = os.stat(f"/proc/{name}/exe")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (want.st_dev, want.st_ino):
                found.append(int(name))
    return found


def planted(work: Path) -> list[str]:
    """Files named jk-pwned anywhere a write attempt could have landed on the host."""
    places = [work, work.parent, Path("/usr/lib"), Path("/tmp")]
    return [str(p / "jk-pwned") for p in places if (p / "jk-pwned").exists()]


def assert_host_fine() -> None:
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork
    meminfo = Path("/proc/meminfo").read_text()
    available = next(
        int(line.split()[1]) for line in meminfo.splitlines() if "MemAvailable" in line
    )
    assert available > 512 * 1024  # kB


async def test_endless_loop_times_out_on_cpu_time() -> None:
    r, work = await run_hostile("endless_loop")
    assert r.status is Status.TIMEOUT, r.detail
    case = r.cases[0]
    # The kernel's RLIMIT_CPU ended it (SIGXCPU), not the wall clock. The figure is the last
    # sample of the namespace's CPU time, taken before the signal, so only its presence is asserted.
    assert "CPU time" in case.detail and case.cpu_seconds is not None and case.cpu_seconds > 0
    assert r.cacheable  # CPU time does not depend on load: the same kernel times out again
    assert survivors(work / "build" / "harness") == []
    assert_host_fine()


async def test_fork_bomb_is_contained_and_nothing_survives() -> None:
    r, work = await run_hostile("fork_bomb")
    assert r.status is Status.TIMEOUT, r.detail
    assert survivors(work / "build" / "harness") == []
    assert_host_fine()


async def test_network_connect_fails_inside() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    try:
        r, work = await run_hostile("net_connect", {"0 /* @JK_PORT@ */": str(port)})
        assert r.status is Status.INCORRECT, r.detail  # no crash (exit 42) = no connection
        assert all(code < 0 for code in codes(work, 2))  # ECONNREFUSED / ENETUNREACH inside
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever reached the host listener
    finally:
        listener.close()


async def test_secrets_and_files_outside_the_candidate_cannot_be_read() -> None:
    secret_dir = fresh_dir("secret")
    marker = f"jk-secret-{uuid.uuid4().hex}".encode()
    secret = secret_dir / "secret.txt"
    secret.write_bytes(marker * 3)
    secret.chmod(0o644)  # readable by anyone on the host: only the sandbox stands in the way
    golden = (await packs(JobKind.PROBE))["local"].golden_dir(SMALL_CASE) / "output0.bin"
    r, work = await run_hostile(
        "read_secrets", {"@JK_HOST_SECRET@": str(secret), "@JK_HOST_GOLDEN@": str(golden)}
    )
    assert r.status is Status.INCORRECT, r.detail
    assert all(code < 0 for code in codes(work, 4)), codes(work, 4)  # every open() failed
    data = output0(work)
    assert marker[:16] not in data and b"root:" not in data
    assert golden.read_bytes()[:32] not in data
    assert data[16:400] == bytes(384)  # exactly what a kernel that read nothing writes


async def test_files_outside_the_output_folder_cannot_be_written() -> None:
    victim_dir = fresh_dir("victim")
    victim_dir.chmod(0o777)
    victim = victim_dir / "victim.txt"
    victim.write_text("original\n")
    victim.chmod(0o666)  # writable by anyone on the host: only the sandbox stands in the way
    before = victim.stat()
    pack_set = await packs(JobKind.PROBE)
    r, work = await run_hostile("write_outside", {"@JK_HOST_VICTIM@": str(victim)})
    assert r.status is Status.INCORRECT, r.detail
    assert all(code < 0 for code in codes(work, 6)), codes(work, 6)
    assert victim.read_text() == "original\n" and victim.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in victim_dir.iterdir()) == ["victim.txt"]
    verify_input_pack(pack_set["local"])  # the read-only inputs are byte for byte intact
    assert not planted(work)


async def test_a_64_gib_allocation_crashes_inside_the_limit() -> None:
    r, work = await run_hostile("big_alloc")
    assert r.status in (Status.CRASHED, Status.RESOURCE_LIMIT), r.detail
    assert "SIGSEGV" in r.cases[0].detail or r.status is Status.RESOURCE_LIMIT
    assert survivors(work / "build" / "harness") == []
    assert_host_fine()


async def test_an_out_of_bounds_write_is_a_sandbox_violation() -> None:
    r, _ = await run_hostile("oob_write")
    assert r.status is Status.SANDBOX_VIOLATION, r.detail
    assert "guard" in r.cases[0].detail


async def test_a_constructor_is_refused_before_anything_runs() -> None:
    r, work = await run_hostile("constructor", scan_syscalls=True)
    assert r.status is Status.STATIC_CHECK_FAILED
    assert r.compile and any(".init_array" in p for p in r.compile.problems)
    assert r.cases == [] and not (work / "build" / "harness").exists()


async def test_raw_syscalls_are_refused_by_the_default_static_checks() -> None:
    r, _ = await run_hostile("fork_bomb", scan_syscalls=True)
    assert r.status is Status.STATIC_CHECK_FAILED
    assert r.compile and any("syscall" in p for p in r.compile.problems)


async def test_a_changed_forbidden_file_is_refused_and_never_poisons_the_cache() -> None:
    require_tools()
    ev = evaluator(settings=own_settings("forbidden"))
    try:
        clean = make_project()
        first = await ev.evaluate(clean, kind="probe", case_ids=[SMALL_CASE])
        assert first.status is Status.PROBE_PASSED
        for rel, text in (
            ("harness/harness.c", "\n/* skip the guard check */\n"),
            ("include/cmg_abi.h", "\n#define CMG_EXTRA 1\n"),
        ):
            tampered = make_project()
            (tampered / rel).write_text((tampered / rel).read_text() + text)
            r = await ev.evaluate(tampered, kind="probe", case_ids=[SMALL_CASE])
            assert r.status is Status.STATIC_CHECK_FAILED and not r.cache_hit
            assert r.source_sha256 == first.source_sha256  # same editable files ...
            assert r.compile and any(rel in p for p in r.compile.problems)
            assert not r.cacheable  # ... so this verdict must never answer for the clean tree
        again = await ev.evaluate(clean, kind="probe", case_ids=[SMALL_CASE])
        assert again.cache_hit and again.status is Status.PROBE_PASSED
    finally:
        await ev.pool.close()
