"""Start the layered command, capture its output, enforce the wall clock, collect CPU time.

The chain runs under `sandbox.reaper` (a child subreaper, see there), which reaps every
process of the sandbox with wait() and reports bwrap's exit status and the CPU time of the
whole tree, fork bombs included. Not `asyncio.create_subprocess_exec`: we need our own
pidfd-based wait to kill on time and to keep Popen from reaping twice.

On timeout the sandbox's pid-namespace init is SIGKILLed through a pidfd (immune to pid
reuse); the kernel then kills every process in the namespace. Their CPU time is read from
/proc just before, because processes killed that way are reaped without accounting. Only if
that does not end the run within a grace period is the whole process group SIGKILLed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from justkernel.toolchains.sandbox.command import CHAIN_ENV
from justkernel.toolchains.sandbox.host import namespace_cpu_seconds
from justkernel.toolchains.sandbox.types import CapturedStream

_GRACE_S = 1.0  # after killing the sandbox init, how long bwrap gets to reap and exit
_DRAIN_S = 2.0  # after exit, how long the pipes get to deliver their last bytes
_REAPER = Path(__file__).with_name("reaper.py")


class _Capture(asyncio.Protocol):
    """Keeps the first and last `cap // 2` bytes of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def stream(self) -> CapturedStream:
        kept = len(self.head) + len(self.tail)
        text = self.head.decode("utf-8", "replace")
        if self.total > kept:
            text += f"\n[... {self.total - kept} bytes omitted ...]\n"
        text += self.tail.decode("utf-8", "replace")
        return CapturedStream(text=text, total_bytes=self.total, truncated=self.total > kept)


class _Init(_Capture):
    """Reads bwrap's --info-fd JSON, holds a pidfd on the sandbox's pid-namespace init, and
    pins that namespace.

    The pin (an open /proc/PID/ns/pid) matters because the kernel reuses a freed namespace's
    inode number within milliseconds: a lab that later looked for "processes in namespace N"
    after its own namespace had died would find, and SIGKILL, another run's sandbox that had
    just been given N. While the pin is open, N names this namespace and no other.
    """

    def __init__(self) -> None:
        super().__init__(1 << 17)
        self.pidfd: int | None = None
        self.ns: int | None = None  # bwrap's report
        self.pin: NamespacePin | None = None  # set only when the report could be verified

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.ns is not None:
            return
        with contextlib.suppress(ValueError, KeyError, TypeError):
            info = json.loads(bytes(self.head))
            pid, self.ns = int(info["child-pid"]), int(info["pid-namespace"])
            with contextlib.suppress(OSError):
                fd = os.pidfd_open(pid)
                pin = NamespacePin.of(pid)  # after the pidfd: a reused pid shows another ns
                if pin is not None and pin.inode == self.ns:
                    self.pidfd, self.pin = fd, pin
                else:
                    os.close(fd)
                    if pin is not None:
                        pin.close()

    def kill(self) -> bool:
        if self.pidfd is None:
            return False
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        return True

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


class NamespacePin:
    """An open handle on a pid namespace: its inode number cannot be reused while it is open."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd
        self.inode = os.fstat(fd).st_ino

    @classmethod
    def of(cls, pid: int) -> NamespacePin | None:
        """Pin the pid namespace `pid` is in, or None if the process is gone."""
        try:
            return cls(os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            return None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class RawRun:
    """What the supervisor saw, before any interpretation."""

    started: bool  # bwrap reported a sandbox (info-fd); False means a setup failure
    timed_out: bool
    exit_code: int | None  # bwrap's exit code (the command's; 128+N for a signal)
    killed_by: int | None  # signal that killed bwrap itself (only in the fallback path)
    wall_seconds: float
    cpu_seconds: float | None
    stdout: CapturedStream
    stderr: CapturedStream
    # The sandbox's pid namespace, pinned (see `_Init`): the caller closes it once nothing is
    # left in it. None if the init was gone before it could be pinned (nothing is left then).
    namespace: NamespacePin | None

    @property
    def pid_namespace(self) -> int | None:
        return self.namespace.inode if self.namespace is not None else None


@dataclass
class Channels:
    """Pipes from the run back to us: bwrap's --info-fd and the reaper's report."""

    info_r: int
    info_w: int
    report_r: int
    report_w: int

    @classmethod
    def open(cls) -> Channels:
        info_r, info_w = os.pipe()
        report_r, report_w = os.pipe()
        return cls(info_r, info_w, report_r, report_w)

    def reaper_argv(self) -> list[str]:
        """The prefix that runs the chain under `sandbox.reaper` (see its docstring)."""
        return [sys.executable, "-I", "-S", str(_REAPER), str(self.report_w), str(os.getpid())]


async def supervise(
    cmd: list[str],
    *,
    channels: Channels,
    pass_fds: tuple[int, ...],
    wall_seconds: float,
    cap: int,
) -> RawRun:
    """Run `cmd` (reaper prefix included) in a new session; kill it all on timeout or cancel."""
    loop = asyncio.get_running_loop()
    info_file = os.fdopen(channels.info_r, "rb", buffering=0)
    report_file = os.fdopen(channels.report_r, "rb", buffering=0)
    t0 = loop.time()
    try:
        proc = subprocess.Popen(  # noqa: ASYNC220 - need wait4's rusage; fork+exec is quick
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(channels.info_w, channels.report_w, *pass_fds),
            start_new_session=True,
            close_fds=True,
            env=CHAIN_ENV,  # never the lab's: bwrap's init shows it in /proc/1/environ
        )
    except BaseException:
        info_file.close()
        report_file.close()
        raise
    finally:
        os.close(channels.info_w)
        os.close(channels.report_w)
    assert proc.stdout is not None and proc.stderr is not None
    out, err, init, report = _Capture(cap), _Capture(cap), _Init(), _Capture(1 << 16)
    transports: list[asyncio.BaseTransport] = []
    pidfd = os.pidfd_open(proc.pid)
    exited: asyncio.Future[None] = loop.create_future()
    loop.add_reader(pidfd, lambda: exited.done() or exited.set_result(None))
    try:  # the pin goes to the caller in the RawRun, or is closed here
        timed_out = False
        sampled_cpu = None
        try:
            pipes = (
                (out, proc.stdout),
                (err, proc.stderr),
                (init, info_file),
                (report, report_file),
            )
            for proto, pipe in pipes:
                transport, _ = await loop.connect_read_pipe(lambda p=proto: p, pipe)
                transports.append(transport)
            done, _ = await asyncio.wait({exited}, timeout=wall_seconds)
            if not done:
                timed_out = True
                if init.pin is not None:  # killing the init loses the tree's times: read them first
                    sampled_cpu = namespace_cpu_seconds(init.pin.inode)
                await _kill(proc.pid, init, exited)
        except BaseException:  # cancelled or failed half-way: the same orderly kill, then re-raise
            if not exited.done():
                await _kill(proc.pid, init, exited)
            raise
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            if not exited.done():  # cancelled once more while killing: no grace left
                init.kill()
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            # It has exited (or was just SIGKILLed): wait4 returns at once.
            _, status, _ = os.wait4(proc.pid, 0)  # noqa: ASYNC222
            proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen never reaps it again
            wall = loop.time() - t0
            try:
                await asyncio.wait([out.closed, err.closed, report.closed], timeout=_DRAIN_S)
            finally:
                for t in transports:
                    t.close()
                for f in (proc.stdout, proc.stderr, info_file, report_file):
                    f.close()
                init.close()
    except BaseException:
        if init.pin is not None:
            init.pin.close()
        raise
    code, killed_by, cpu = _read_report(report, proc.returncode)
    if sampled_cpu is not None:
        cpu = max(cpu or 0.0, sampled_cpu)
    return RawRun(
        started=init.ns is not None,
        timed_out=timed_out,
        exit_code=code,
        killed_by=killed_by,
        wall_seconds=wall,
        cpu_seconds=cpu,
        stdout=out.stream(),
        stderr=err.stream(),
        namespace=init.pin,
    )


def _read_report(report: _Capture, reaper_code: int) -> tuple[int | None, int | None, float | None]:
    """(exit code, killing signal, cpu seconds) of bwrap, from the reaper's report.

    Without a report (the reaper was killed, or could not start the chain) the reaper's own
    exit status stands in, and the CPU time is unknown.
    """
    try:
        status_text, cpu_text = bytes(report.head).decode().split()
        status, cpu = (None if status_text == "-" else int(status_text)), float(cpu_text)
    except ValueError:
        status, cpu = None, None
    code = reaper_code if status is None else os.waitstatus_to_exitcode(status)
    return (code, None, cpu) if code >= 0 else (None, -code, cpu)


async def _kill(pgid: int, init: _Init, exited: asyncio.Future[None]) -> None:
    """Kill the sandbox init (whole pid namespace), then, if needed, the process group."""
    if init.kill():
        done, _ = await asyncio.wait({exited}, timeout=_GRACE_S)
        if done:
            return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    await exited
