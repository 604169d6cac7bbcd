"""The host command line of one sandboxed run: prlimit -> [setpriv] -> bwrap -> program.

A pure function of its inputs, so the receipt can record exactly what ran, and the sandbox
view (paths, environment) is the same whatever host folders the job uses.

bwrap's own arguments (the bind sources name host folders) do not go on its command line:
they are handed over NUL-separated through `--args FD`. bwrap's pid-namespace init is a fork
of bwrap, and /proc/1/cmdline and /proc/1/environ show a kernel its argv and the environment
it was started with; so the chain gets `--args` and `CHAIN_ENV`, and shows nothing of the lab.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from justkernel.toolchains.sandbox.types import SANDBOX_OUT, SANDBOX_ROOT, SandboxLimits

# Fixed environment: the stack layout (and so cache counts) depends on it, and nothing of the
# host's environment (tokens, paths) may leak in. HOME/cwd point at /sandbox, which is
# read-only, so valgrind never picks up a ~/.valgrindrc or ./.valgrindrc planted by a
# candidate in an output folder.
DEFAULT_ENV: dict[str, str] = {
    "PATH": "/usr/bin:/bin",
    "HOME": SANDBOX_ROOT,
    "LC_ALL": "C",
    "TMPDIR": "/tmp",
}
DEFAULT_CWD = SANDBOX_ROOT
# Environment of the chain itself (reaper, prlimit, setpriv, bwrap), never the lab's: it is
# what /proc/1/environ shows inside. LC_ALL=C keeps bwrap's messages parseable.
CHAIN_ENV: dict[str, str] = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}

# Top-level system folders; on merged-/usr hosts they are symlinks into /usr.
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


@dataclass(frozen=True)
class Tools:
    """Absolute paths of the host tools the layers need (setpriv only when root)."""

    prlimit: str
    bwrap: str
    setpriv: str | None


def _system_root_args() -> list[str]:
    """A read-only /usr and its top-level aliases; deliberately no /etc at all."""
    args = ["--ro-bind", "/usr", "/usr"]
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    return args


def prlimit_args(limits: SandboxLimits, nproc: int) -> list[str]:
    """RLIMITs for the whole tree; CPU hard limit one second after the soft one (SIGXCPU)."""
    cpu = max(1, int(limits.cpu_seconds))
    return [
        f"--cpu={cpu}:{cpu + 1}",
        f"--as={limits.address_space_bytes}",
        f"--fsize={limits.file_size_bytes}",
        "--core=0",
        f"--nofile={limits.open_files}",
        f"--nproc={nproc}",
    ]


@dataclass(frozen=True)
class SandboxCommand:
    """One run's chain: the layers up to bwrap, bwrap's options (sent via --args FD), and the
    program as the sandbox sees it (sandbox paths only, so it stays on the command line)."""

    layers: list[str]  # prlimit ... setpriv ... bwrap
    bwrap_args: list[str]
    program: list[str]  # "--", argv

    @property
    def shown(self) -> list[str]:
        """The whole command as one argv, for the receipt (what ran, in the order it applies)."""
        return [*self.layers, *self.bwrap_args, *self.program]

    def argv(self, args_fd: int) -> list[str]:
        """What is executed: bwrap reads its options from `args_fd`."""
        return [*self.layers, "--args", str(args_fd), *self.program]

    def args_data(self) -> bytes:
        """bwrap's arguments as --args wants them: each one NUL-terminated."""
        return b"".join(arg.encode() + b"\0" for arg in self.bwrap_args)


def build_command(
    tools: Tools,
    argv: Sequence[str],
    *,
    ro_binds: Mapping[str, str],
    rw_dir: str,
    limits: SandboxLimits,
    nproc: int,
    env: Mapping[str, str],
    cwd: str,
    uid_gid: tuple[int, int] | None,
    info_fd: int,
    seccomp_fd: int | None,
) -> SandboxCommand:
    """The host chain. `ro_binds` maps sandbox path -> host path; `uid_gid` adds setpriv."""
    layers = [tools.prlimit, *prlimit_args(limits, nproc), "--"]
    if uid_gid is not None:
        assert tools.setpriv is not None
        uid, gid = uid_gid
        layers += [tools.setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
    layers.append(tools.bwrap)
    cmd = [
        "--unshare-all",  # user, pid, net, ipc, uts, cgroup: no network at all
        "--unshare-user",  # explicit, so that --disable-userns is accepted
        "--disable-userns",  # no nested user namespaces for the candidate
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into a terminal
        "--hostname",
        "sandbox",
        "--clearenv",
    ]
    for key in sorted(env):
        cmd += ["--setenv", key, env[key]]
    cmd += _system_root_args()
    cmd += ["--proc", "/proc", "--dev", "/dev", "--perms", "0755", "--dir", SANDBOX_ROOT]
    for dest in sorted(ro_binds):
        cmd += ["--ro-bind", ro_binds[dest], dest]
    cmd += ["--bind", rw_dir, SANDBOX_OUT]
    cmd += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    # The root and /dev are tmpfs (RAM); read-only so the only writable places are
    # /sandbox/out (host disk, RLIMIT_FSIZE per file) and the size-capped /tmp.
    cmd += ["--remount-ro", "/dev", "--remount-ro", "/"]
    cmd += ["--chdir", cwd, "--info-fd", str(info_fd)]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    return SandboxCommand(layers, cmd, ["--", *argv])
