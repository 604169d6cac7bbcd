"""`run_sandboxed` for a backend's build and run steps: a sandbox that failed to start is retried,
never judged.

Harness runs get RLIMIT_NPROC = 3 (bwrap's two processes and the harness), which RLIMIT_NPROC
counts per uid. A zombie left with the leased pool uid by some earlier sandbox (one whose init
the host has not reaped yet) then makes bwrap's own fork fail: "bwrap: Can't fork for pid 1".
That says nothing about the candidate, so the run is retried with a backoff and, if the sandbox
still cannot start, reported as a ToolchainError (no receipt, nothing cached).
"""

from __future__ import annotations

import asyncio
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

from justkernel.toolchains.protocol import ToolchainError
from justkernel.toolchains.sandbox import (
    SandboxLimits,
    SandboxResult,
    SandboxStatus,
    run_sandboxed,
)

RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0)  # seconds; the host reaps stray zombies within ~1 s


def _setup_failed(r: SandboxResult) -> bool:
    """bwrap itself failed (before the command ran): exit 1 and a `bwrap:` message."""
    return (
        r.status is SandboxStatus.NONZERO_EXIT
        and r.exit_code == 1
        and r.stderr.text.startswith("bwrap: ")
    )


async def run_checked(
    argv: Sequence[str],
    *,
    ro_binds: Mapping[str, Path],
    rw_dir: Path,
    limits: SandboxLimits,
    cwd: str | None = None,
) -> SandboxResult:
    """run_sandboxed, retried while the sandbox itself cannot start."""
    for delay in (*RETRY_DELAYS, None):
        r = await run_sandboxed(argv, ro_binds=ro_binds, rw_dir=rw_dir, limits=limits, cwd=cwd)
        if not _setup_failed(r):
            return r
        if delay is None:
            raise ToolchainError(f"the sandbox did not start: {r.stderr.text.strip()[:300]}")
        await asyncio.sleep(delay)
    raise AssertionError("unreachable")


def sandbox_kind() -> str:
    """The layers a run gets here, for the receipt's executor (no probe run needed)."""
    layers = ["bwrap", "prlimit"]
    if os.geteuid() == 0:
        layers.append("setpriv(uid pool)")
    if SandboxLimits().seccomp and platform.machine() in ("x86_64", "aarch64"):
        layers.append("seccomp")
    return "+".join(layers)
