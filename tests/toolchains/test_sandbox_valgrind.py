"""valgrind/cachegrind inside the sandbox: it runs, and counts do not depend on host paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from justkernel.toolchains.sandbox import SandboxLimits, SandboxStatus, run_sandboxed

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed"),
]

CACHEGRIND = [
    "valgrind",
    "--tool=cachegrind",
    "--cache-sim=yes",
    "--I1=32768,8,64",
    "--D1=32768,8,64",
    "--LL=2097152,16,64",
    "--cachegrind-out-file=/sandbox/out/cg.out",
    "/sandbox/bin/workload",
]


async def cachegrind(bin_dir: Path, out: Path) -> bytes:
    r = await run_sandboxed(
        CACHEGRIND, ro_binds={"bin": bin_dir}, rw_dir=out, limits=SandboxLimits.valgrind()
    )
    assert r.status is SandboxStatus.OK, r.stderr.text
    assert "I1  misses" in r.stderr.text  # cachegrind's own summary
    return (out / "cg.out").read_bytes()


async def test_cachegrind_counts_are_identical_from_any_host_folder(
    hostile_bin: Path, work: Path
) -> None:
    runs = []
    for name in ("a", "some/deeper/host/folder"):
        bin_dir, out = work / name / "bin", work / name / "out"
        bin_dir.mkdir(parents=True)
        out.mkdir()
        for d in (work / name, *bin_dir.parents):
            if d.is_relative_to(work):
                d.chmod(0o755)
        shutil.copy2(hostile_bin / "workload", bin_dir / "workload")
        runs.append(await cachegrind(bin_dir, out))
    first, second = runs
    summary = [line for line in first.splitlines() if line.startswith(b"summary:")]
    assert len(summary) == 1 and summary[0].split()[1] != b"0"
    assert summary == [line for line in second.splitlines() if line.startswith(b"summary:")]
    assert b"cmd: /sandbox/bin/workload" in first
    assert first == second  # the whole file, command line included
