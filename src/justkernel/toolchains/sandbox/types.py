"""Value types of the sandbox API: limits in, result out, and the errors.

Kept apart from the runner so the command builder and the host helpers can share them
without import cycles; import them from `justkernel.toolchains.sandbox`.
"""

from __future__ import annotations

import dataclasses
import signal
from dataclasses import dataclass, field
from enum import StrEnum

GiB = 1 << 30
MiB = 1 << 20

# Fixed paths inside the sandbox. Fixed because valgrind/cachegrind writes the command line
# into its output and the stack layout depends on argv/env: counts must not depend on where
# the job happens to live on the host.
SANDBOX_ROOT = "/sandbox"
SANDBOX_OUT = "/sandbox/out"

# Exit code a program or harness inside the sandbox uses to report an escape attempt it
# detected itself (e.g. a write outside /sandbox/out that failed). Mapped to
# `SandboxStatus.SANDBOX_VIOLATION`.
VIOLATION_EXIT_CODE = 97


class SandboxError(RuntimeError):
    """The sandbox could not run the command; nothing about the candidate is known."""


class SandboxUnavailable(SandboxError):
    """A sandbox layer is missing on this host (tool not installed, no user namespaces).

    Raised instead of running anything: there is no unsandboxed fallback.
    """


class SandboxSetupError(SandboxError):
    """The sandbox exists but this call could not be set up (bad path, permissions ...)."""


class SandboxStatus(StrEnum):
    """What happened to the sandboxed command, coarse enough for a candidate status."""

    OK = "ok"
    NONZERO_EXIT = "nonzero_exit"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    RESOURCE_LIMIT = "resource_limit"
    SANDBOX_VIOLATION = "sandbox_violation"


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandboxed run. Defaults suit a native functional check.

    `processes` is RLIMIT_NPROC, which the kernel counts per real uid: as root every run
    gets its own uid from a pool (see `sandbox.host`), so the count is that run's alone.
    """

    wall_seconds: float = 30.0
    cpu_seconds: int = 30  # RLIMIT_CPU soft limit (SIGXCPU); hard limit one second later
    address_space_bytes: int = 4 * GiB  # RLIMIT_AS, per process
    file_size_bytes: int = 64 * MiB  # RLIMIT_FSIZE, per file (SIGXFSZ)
    open_files: int = 64  # RLIMIT_NOFILE
    processes: int = 64  # RLIMIT_NPROC, includes bwrap's own two processes
    tmp_bytes: int = 64 * MiB  # size of the private /tmp (tmpfs is RAM, so it is capped)
    capture_bytes: int = 256 * 1024  # kept per stream: first half and last half
    seccomp: bool = True  # the deny-list filter (sandbox.seccomp)
    anonymous_exec: bool = False  # anonymous executable memory: valgrind's JIT only (seccomp)

    @classmethod
    def valgrind(cls, **overrides: object) -> SandboxLimits:
        """Preset for valgrind/cachegrind: room for valgrind's own heap and translations,
        and the 20-50x slowdown."""
        base = cls(
            wall_seconds=300.0,
            cpu_seconds=300,
            address_space_bytes=16 * GiB,
            open_files=128,
            anonymous_exec=True,
        )
        return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]


@dataclass(frozen=True)
class CapturedStream:
    """A captured stdout/stderr: `text` is the head and, if cut, a marker and the tail."""

    text: str
    total_bytes: int
    truncated: bool


@dataclass(frozen=True)
class SandboxResult:
    """Everything a receipt needs about one sandboxed run."""

    status: SandboxStatus
    exit_code: int | None  # the command's exit status when it exited normally
    signal: int | None  # the signal that killed it, if any
    wall_seconds: float
    cpu_seconds: float | None  # user+sys of every process in the sandbox; None if unknown
    stdout: CapturedStream
    stderr: CapturedStream
    command: list[str]  # the exact argv executed on the host (all layers)
    sandbox_argv: list[str]  # the argv as the program saw it, inside the sandbox
    sandbox_uid: int  # the uid the command ran as (host view)
    resource: str | None = None  # which limit: cpu, file_size, address_space
    violations: list[str] = field(default_factory=list)  # why status is sandbox_violation

    @property
    def signal_name(self) -> str | None:
        if self.signal is None:
            return None
        try:
            return signal.Signals(self.signal).name
        except ValueError:
            return f"SIG{self.signal}"

    @property
    def ok(self) -> bool:
        return self.status is SandboxStatus.OK
