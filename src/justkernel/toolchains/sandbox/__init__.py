"""Run untrusted candidate code (native binaries, valgrind) so that it can harm nothing.

    result = await run_sandboxed(["/sandbox/bin/prog", "case3"], ro_binds={"bin": build_dir,
                                 "in": case_dir}, rw_dir=job_out, limits=SandboxLimits())

Layers, outermost first, and why each is there:

1. Wall clock, kill and reap (`sandbox.exec`, `sandbox.reaper`). A new session per run,
   under a small subreaper that wait()s for every process of the run, so CPU time covers
   the whole tree and no zombie is left to the host's init. On timeout (or cancellation)
   the sandbox's pid-namespace init is SIGKILLed, which makes the kernel kill everything in
   the namespace; then the process group if needed. Before returning, `ensure_gone` checks
   that no process is left in the namespace (nor, as root, with the run's uid). The
   namespace is held open until then: the kernel reuses a freed namespace's number at once,
   and a check by number alone would find (and kill) the next run's sandbox.
2. `prlimit` (util-linux): RLIMIT_CPU (SIGXCPU), RLIMIT_AS, RLIMIT_FSIZE (SIGXFSZ),
   RLIMIT_CORE=0, RLIMIT_NOFILE, RLIMIT_NPROC. Set before the uid drop so they cannot be
   raised again. RLIMIT_NPROC counts per real uid, hence a uid per run (next layer).
3. `setpriv --reuid --regid --clear-groups` (root only): drop to a uid leased from a pool of
   unused uids (61000-61063, `sandbox.host`), so concurrent sandboxes have separate process
   budgets and cannot signal each other, and nothing else on the host shares the uid (as it
   would with `nobody`). When the lab runs as a normal user this layer is skipped (it is
   unprivileged already) and RLIMIT_NPROC is raised by the number of processes the user
   already has, since the kernel counts those too.
4. `bwrap` as that uid: new user, pid, net, ipc, uts and cgroup namespaces (no network, not
   even loopback), nested user namespaces disabled, cleared fixed environment, new session,
   dies with its parent. The root is an empty tmpfs made read-only, with /usr (and its
   /bin, /lib* aliases) read-only, a fresh /proc and minimal /dev, no /etc at all (so no
   /etc/shadow or host config), a private size-capped /tmp, the caller's read-only binds at
   fixed paths under /sandbox, and one writable folder, /sandbox/out. Paths are fixed so
   that cachegrind's counts and output file are bit-identical wherever the job lives.
5. seccomp deny-list (`sandbox.seccomp`): mount, ptrace, bpf, io_uring, keyrings, ... kill
   the process with SIGSYS, reported as `sandbox_violation`.

bwrap runs as the unprivileged uid rather than as root with the drop inside, so that no
process of the sandbox is ever root and nested user namespaces can be disabled. The price:
the sandbox uid must be able to reach every bound host path. So nothing is bound where it
lives: each run's inputs and output folder are staged under a lab-owned 0711 folder outside
the data folder (`sandbox.stage`), which also keeps the lab's folders out of the sandbox's
/proc/self/mountinfo; a data folder in /root (0700) works as well as one under /tmp. The
staged output folder is chowned to the uid for the run, back after, and moved to `rw_dir`.

Nothing of the lab's process shows inside: the chain starts with the fixed `CHAIN_ENV`,
never the lab's environment, because bwrap's pid-namespace init (a fork of bwrap) keeps the
environment bwrap was started with in /proc/1/environ; and bwrap's options, which name the
staged host folders, go through `--args FD` rather than its command line (/proc/1/cmdline).
The reaper gets PR_SET_PDEATHSIG, so a SIGKILLed lab takes its sandboxes along. What the
program prints is scrubbed of the lab's own secret values (`settings.redaction`) before
anyone stores it.

Nothing runs unsandboxed: a missing tool or unusable user namespaces raise
`SandboxUnavailable`; a caller mistake (missing program, bad cwd or bind) raises
`SandboxSetupError` before anything starts. What the candidate did is in the status:

- ok: exit 0.  nonzero_exit: any other exit code.  timeout: the wall clock ran out.
- crashed: killed by a signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, ...; also an RLIMIT_AS
  failure that the program turned into a crash, which cannot be told apart).
- resource_limit: SIGXCPU or SIGKILL at the CPU limit (`resource="cpu"`), SIGXFSZ
  (`"file_size"`), valgrind out of memory (`"address_space"`).
- sandbox_violation: SIGSYS from the seccomp filter, exit code `VIOLATION_EXIT_CODE` (a
  harness reporting an escape attempt), or the output folder held a symlink, fifo, socket,
  device or setuid file when handed back (removed before the host reads anything).
  Takes precedence over every other status.

bwrap reports a command killed by signal N as exit code 128+N, like a shell; a program that
exits with 128+N itself looks the same (either way it failed).

Known limits: memory is capped per process (RLIMIT_AS), not per sandbox (no cgroups); the
output folder's total size is bounded only by RLIMIT_FSIZE per file and the wall clock;
/proc shows host-wide facts such as /proc/cpuinfo and /proc/meminfo.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from justkernel.settings import redaction
from justkernel.toolchains.sandbox import host as sandbox_host
from justkernel.toolchains.sandbox import seccomp as sandbox_seccomp
from justkernel.toolchains.sandbox import stage as sandbox_stage
from justkernel.toolchains.sandbox.command import (
    CHAIN_ENV,
    DEFAULT_CWD,
    DEFAULT_ENV,
    Tools,
    build_command,
)
from justkernel.toolchains.sandbox.exec import Channels, RawRun, supervise
from justkernel.toolchains.sandbox.paths import SandboxView
from justkernel.toolchains.sandbox.types import (
    SANDBOX_OUT,
    SANDBOX_ROOT,
    VIOLATION_EXIT_CODE,
    CapturedStream,
    SandboxError,
    SandboxLimits,
    SandboxResult,
    SandboxSetupError,
    SandboxStatus,
    SandboxUnavailable,
)

__all__ = [
    "SANDBOX_OUT",
    "SANDBOX_ROOT",
    "VIOLATION_EXIT_CODE",
    "CapturedStream",
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "SandboxSetupError",
    "SandboxStatus",
    "SandboxUnavailable",
    "find_tools",
    "run_sandboxed",
    "sandbox_capabilities",
]

_VALGRIND_OOM = "Valgrind's memory management: out of memory"


def _is_root() -> bool:
    return os.geteuid() == 0


def find_tools() -> Tools:
    """The layer tools on PATH; SandboxUnavailable naming every missing one."""
    need = ["prlimit", "bwrap"] + (["setpriv"] if _is_root() else [])
    found = {name: shutil.which(name) for name in need}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        raise SandboxUnavailable(
            f"sandbox tools missing: {', '.join(missing)} "
            "(Debian/Ubuntu: apt-get install bubblewrap util-linux)"
        )
    return Tools(prlimit=found["prlimit"], bwrap=found["bwrap"], setpriv=found.get("setpriv"))  # type: ignore[arg-type]


def _classify(
    raw: RawRun, limits: SandboxLimits, violations: list[str]
) -> tuple[SandboxStatus, int | None, int | None, str | None]:
    """(status, exit_code, signal, resource) from what was seen; the mapping in the docstring."""
    code, sig = raw.exit_code, raw.killed_by
    if code is not None and 128 < code <= 128 + signal.SIGRTMAX:
        code, sig = None, code - 128
    if sig == signal.SIGSYS:
        violations.append("killed by the seccomp filter (forbidden syscall)")
    if code == VIOLATION_EXIT_CODE:
        violations.append(f"the program reported an escape attempt (exit {code})")
    if violations:
        return SandboxStatus.SANDBOX_VIOLATION, code, sig, None
    if raw.timed_out:
        return SandboxStatus.TIMEOUT, code, sig, None
    at_cpu_limit = (raw.cpu_seconds or 0.0) >= limits.cpu_seconds
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and at_cpu_limit):
        return SandboxStatus.RESOURCE_LIMIT, code, sig, "cpu"
    if sig == signal.SIGXFSZ:
        return SandboxStatus.RESOURCE_LIMIT, code, sig, "file_size"
    if sig is not None:
        return SandboxStatus.CRASHED, code, sig, None
    if code and _VALGRIND_OOM in raw.stderr.text:
        return SandboxStatus.RESOURCE_LIMIT, code, sig, "address_space"
    if code:
        return SandboxStatus.NONZERO_EXIT, code, sig, None
    return SandboxStatus.OK, code, sig, None


async def run_sandboxed(
    argv: Sequence[str],
    *,
    ro_binds: Mapping[str, Path] | None = None,
    rw_dir: Path,
    limits: SandboxLimits | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> SandboxResult:
    """Run `argv` inside the sandbox and report what happened.

    `argv` and `cwd` are sandbox paths. `ro_binds` maps a sandbox path under /sandbox (or a
    bare name: "in" -> /sandbox/in) to a host file or folder mounted read-only there.
    `rw_dir` (an existing host folder) is staged, mounted at /sandbox/out (the only writable
    place besides a private /tmp), and afterwards holds what the program left there.
    `env` is added to the fixed `DEFAULT_ENV`; `cwd` defaults to /sandbox (read-only).
    Raises SandboxUnavailable / SandboxSetupError; never runs the command without every
    layer.
    """
    if not argv:
        raise SandboxSetupError("empty argv")
    limits = limits or SandboxLimits()
    tools = find_tools()
    view = SandboxView.of(ro_binds, rw_dir)
    for host in (*view.binds.values(), view.rw_dir):
        if not host.exists():
            raise SandboxSetupError(f"sandbox bind source does not exist: {host}")
    full_env = {**DEFAULT_ENV, **(env or {})}
    cwd = cwd or DEFAULT_CWD
    view.check(argv, cwd, full_env.get("PATH", ""))
    root = _is_root()
    lease = sandbox_host.lease_uid() if root else contextlib.nullcontext(os.getuid())
    async with lease as uid:
        gid = uid if root else os.getgid()
        stage = sandbox_stage.Stage.of(view, (uid, gid) if root else None)
        try:
            cmd, raw, violations = await _run_staged(
                tools, argv, stage.view, limits, full_env, cwd, uid, gid, root
            )
            stage.hand_back()
        finally:
            stage.remove()
    if not raw.started:
        _raise_setup_failure(raw.stderr)
    status, code, sig, resource = _classify(raw, limits, violations)
    return SandboxResult(
        status=status,
        exit_code=code,
        signal=sig,
        wall_seconds=raw.wall_seconds,
        cpu_seconds=raw.cpu_seconds,
        stdout=_scrubbed(raw.stdout),
        stderr=_scrubbed(raw.stderr),
        command=cmd,
        sandbox_argv=list(argv),
        sandbox_uid=uid,
        resource=resource,
        violations=violations,
    )


async def _run_staged(
    tools: Tools,
    argv: Sequence[str],
    view: SandboxView,
    limits: SandboxLimits,
    env: Mapping[str, str],
    cwd: str,
    uid: int,
    gid: int,
    root: bool,
) -> tuple[list[str], RawRun, list[str]]:
    """Run on the staged folders: (command for the receipt, what was seen, violations)."""
    if root:  # bwrap runs as the sandbox uid: it must reach every bound path
        for host in view.binds.values():
            sandbox_host.check_reachable(host, uid, gid, read=True)
        sandbox_host.check_reachable(view.rw_dir, uid, gid, read=False)
    nproc = limits.processes + (0 if root else sandbox_host.count_own_processes())
    handover = sandbox_host.Handover.lend(view.rw_dir, uid if root else None, gid)
    fds: list[int] = []
    raw: RawRun | None = None
    try:
        bpf = sandbox_seccomp.filter_for(limits)
        seccomp_fd = _memfd(bpf) if bpf is not None else None
        if seccomp_fd is not None:
            fds.append(seccomp_fd)
        channels = Channels.open()
        command = build_command(
            tools,
            argv,
            ro_binds={dest: str(host) for dest, host in view.binds.items()},
            rw_dir=str(view.rw_dir),
            limits=limits,
            nproc=nproc,
            env=env,
            cwd=cwd,
            uid_gid=(uid, gid) if root else None,
            info_fd=channels.info_w,
            seccomp_fd=seccomp_fd,
        )
        args_fd = _memfd(command.args_data())
        fds.append(args_fd)
        raw = await supervise(
            channels.reaper_argv() + command.argv(args_fd),
            channels=channels,
            pass_fds=tuple(fds),
            wall_seconds=limits.wall_seconds,
            cap=limits.capture_bytes,
        )
    finally:
        for fd in fds:
            os.close(fd)
        ns = raw.pid_namespace if raw is not None else None
        try:
            await sandbox_host.ensure_gone(ns, uid if root else None)
        finally:  # only now may the kernel give the namespace's number to another sandbox
            if raw is not None and raw.namespace is not None:
                raw.namespace.close()
        violations = handover.take_back(chown=root)
    return command.shown, raw, violations


def _scrubbed(stream: CapturedStream) -> CapturedStream:
    """The stream without any secret value the lab holds (however the program learned it)."""
    return dataclasses.replace(stream, text=redaction.scrub(stream.text))


def _memfd(data: bytes) -> int:
    """An inheritable fd holding `data` from offset 0 (for bwrap --seccomp and --args)."""
    fd = os.memfd_create("justkernel-sandbox", 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _raise_setup_failure(stderr: CapturedStream) -> None:
    text = stderr.text.strip()
    if "namespace" in text or "Operation not permitted" in text:
        raise SandboxUnavailable(f"bwrap could not create the sandbox: {text}")
    raise SandboxSetupError(f"sandbox setup failed: {text}")


def sandbox_capabilities() -> dict[str, object]:
    """What this host offers, for `justkernel check`; `usable` runs a real probe sandbox."""
    root = _is_root()
    caps: dict[str, object] = {
        "root": root,
        "bwrap": shutil.which("bwrap"),
        "prlimit": shutil.which("prlimit"),
        "setpriv": shutil.which("setpriv"),
        "valgrind": shutil.which("valgrind"),
        "seccomp_arch": sandbox_seccomp.machine(),
        "seccomp": sandbox_seccomp.deny_filter() is not None,
        "uid_pool": (
            f"{sandbox_host.UID_BASE}-{sandbox_host.UID_BASE + sandbox_host.UID_COUNT - 1}"
            if root
            else None
        ),
    }
    try:
        tools = find_tools()
    except SandboxUnavailable as e:
        return {**caps, "user_namespaces": None, "usable": False, "error": str(e)}
    ok, error = _probe(tools, root)
    return {**caps, "user_namespaces": ok, "usable": ok, "error": error}


def _probe(tools: Tools, root: bool) -> tuple[bool, str | None]:
    """Run `true` through every layer, seccomp included (as a leased pool uid when root)."""
    lease = sandbox_host.lease_uid_now() if root else (os.getuid(), None)
    if lease is None:
        return True, None  # every pool uid is running a sandbox right now: it works
    uid, lock_fd = lease
    gid = uid if root else os.getgid()
    bpf = sandbox_seccomp.deny_filter()
    seccomp_fd = _memfd(bpf) if bpf is not None else None
    info_r, info_w = os.pipe()
    args_fd: int | None = None
    try:
        with tempfile.TemporaryDirectory(prefix="probe-", dir=sandbox_stage.staging_root()) as tmp:
            os.chmod(tmp, 0o755)
            command = build_command(
                tools,
                ["/bin/true"],
                ro_binds={},
                rw_dir=tmp,
                limits=SandboxLimits(),
                nproc=SandboxLimits().processes + (0 if root else 4096),
                env=DEFAULT_ENV,
                cwd=DEFAULT_CWD,
                uid_gid=(uid, gid) if root else None,
                info_fd=info_w,
                seccomp_fd=seccomp_fd,
            )
            args_fd = _memfd(command.args_data())
            fds = (info_w, args_fd) if seccomp_fd is None else (info_w, args_fd, seccomp_fd)
            r = subprocess.run(
                command.argv(args_fd),
                capture_output=True,
                text=True,
                timeout=20,
                pass_fds=fds,
                env=CHAIN_ENV,
            )
    except (OSError, SandboxError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    finally:
        for fd in (info_r, info_w, seccomp_fd, args_fd, lock_fd):
            if fd is not None:
                os.close(fd)
    if r.returncode != 0:
        return False, r.stderr.strip() or f"exit {r.returncode}"
    return True, None
