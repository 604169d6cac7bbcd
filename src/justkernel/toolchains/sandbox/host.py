"""Host-side chores around one sandboxed run: which uid, which paths, cleanup.

- Uid pool (root only). RLIMIT_NPROC is counted per real uid, so sandboxes sharing one uid
  (say `nobody`) would share one process budget: a fork bomb in one would starve the others,
  and anything else running as `nobody` would count too. Each run therefore leases its own
  uid from `UID_BASE .. UID_BASE+UID_COUNT-1` (numbers with no passwd entry; no account is
  needed), with an flock in `LOCK_DIR` so concurrent lab processes on one host never share.
- Path preflight (root only). bwrap runs *as the sandbox uid* (that is what makes user
  namespaces and --disable-userns work), so the uid must be able to reach every bound host
  path. A private parent such as /tmp/pytest-of-root (0700) fails here with a clear message
  instead of an obscure bwrap error.
- Output handover. The output folder is chowned to the sandbox uid before and back to its
  owner afterwards, so the host can clean up. On the way back, anything a program could use
  to trick the host reading its output (symlinks, fifos, sockets, device nodes,
  setuid/setgid bits) is removed or stripped and reported as a violation.
- Leftovers. After a run no process may remain in its pid namespace (nor, as root, with its
  uid). `sandbox.reaper` normally makes that so; `ensure_gone` checks it and enforces it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from justkernel.toolchains.sandbox.types import SandboxError, SandboxSetupError

UID_BASE = 61000
UID_COUNT = 64
LOCK_DIR = Path("/run/justkernel-sandbox")


@functools.cache
def _pool() -> tuple[int, ...]:
    """Pool uids that no account uses (read once: /etc/passwd lookups are slow)."""
    import pwd  # POSIX only, imported here: the demo imports this module on any desktop

    taken = {entry.pw_uid for entry in pwd.getpwall()}
    return tuple(u for u in range(UID_BASE, UID_BASE + UID_COUNT) if u not in taken)


def try_lock_uid(uid: int) -> int | None:
    """The fd holding `uid`'s pool lock (close it to release), or None if in use."""
    import fcntl  # POSIX only, imported here: the demo imports this module on any desktop

    LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(LOCK_DIR / f"uid-{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def uid_has_processes(uid: int) -> bool:
    """Whether any process, zombies included, still belongs to `uid`: a zombie counts
    against the uid's process limit until it is reaped, so its uid is not free yet."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    return True
            except OSError:
                continue
    return False


def lease_uid_now() -> tuple[int, int] | None:
    """(uid, lock fd) of a free pool uid, or None if every one is in use."""
    for uid in _pool():
        fd = try_lock_uid(uid)
        if fd is None:
            continue
        if uid_has_processes(uid):  # a previous run's leftovers are still being reaped
            os.close(fd)
            continue
        return uid, fd
    return None


@contextlib.asynccontextmanager
async def lease_uid() -> AsyncIterator[int]:
    """Hold one pool uid for the duration of a run (waits while all are busy)."""
    if not _pool():
        raise SandboxSetupError(f"no free sandbox uid in {UID_BASE}..{UID_BASE + UID_COUNT - 1}")
    # Polling: the locks are shared with other processes, which no asyncio.Event can see.
    while (lease := lease_uid_now()) is None:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    uid, fd = lease
    try:
        yield uid
    finally:
        os.close(fd)  # closing releases the flock


def _may(st: os.stat_result, uid: int, gid: int, bits: int) -> bool:
    """Whether `uid`/`gid` (no supplementary groups) has rwx `bits` (as the `o` triple)."""
    if st.st_uid == uid:
        return (st.st_mode >> 6) & bits == bits
    if st.st_gid == gid:
        return (st.st_mode >> 3) & bits == bits
    return st.st_mode & bits == bits


def check_reachable(path: Path, uid: int, gid: int, *, read: bool) -> None:
    """Raise SandboxSetupError unless `uid` can traverse to `path` (and read it if `read`)."""
    path = Path(os.path.abspath(path))
    if not path.exists():
        raise SandboxSetupError(f"sandbox bind source does not exist: {path}")
    for parent in reversed(path.parents):
        if not _may(parent.stat(), uid, gid, 0o1):
            raise SandboxSetupError(
                f"sandbox uid {uid} cannot traverse {parent} (mode "
                f"{stat.S_IMODE(parent.stat().st_mode):04o}) to reach {path}; "
                "keep sandbox inputs and outputs under world-traversable folders"
            )
    if read:
        st = path.stat()
        need = 0o5 if stat.S_ISDIR(st.st_mode) else 0o4
        if not _may(st, uid, gid, need):
            raise SandboxSetupError(
                f"sandbox uid {uid} cannot read {path} (mode {stat.S_IMODE(st.st_mode):04o})"
            )


def _walk(root: Path) -> list[tuple[Path, os.stat_result]]:
    """Every entry under `root` (not following symlinks), parents first, with its lstat.

    Folders get u+rwx on the way, so one the sandbox made unreadable cannot hide anything
    from the walk (and the owner can delete it later).
    """
    out = []
    os.chmod(root, stat.S_IMODE(root.lstat().st_mode) | stat.S_IRWXU)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            try:
                st = p.lstat()
                if stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IRWXU != stat.S_IRWXU:
                    os.chmod(p, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)  # before os.walk enters
                    st = p.lstat()
            except FileNotFoundError:
                continue
            out.append((p, st))
    return out


def _is_plain(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)


@dataclass
class Handover:
    """The output folder lent to the sandbox; `take_back` returns it to its owner."""

    root: Path
    owner: tuple[int, int]
    preexisting: set[tuple[str, int]] = field(default_factory=set)  # (relpath, inode)

    @classmethod
    def lend(cls, root: Path, uid: int | None, gid: int | None) -> Handover:
        """Snapshot `root` and, when `uid` is given (root mode), chown it to the sandbox."""
        st = root.lstat()
        if not stat.S_ISDIR(st.st_mode):
            raise SandboxSetupError(f"sandbox output folder is not a directory: {root}")
        entries = _walk(root)
        pre = {(str(p.relative_to(root)), s.st_ino) for p, s in entries if not _is_plain(s)}
        if uid is not None and gid is not None:
            os.chown(root, uid, gid)
            for p, s in entries:
                if _is_plain(s):
                    os.chown(p, uid, gid, follow_symlinks=False)
        return cls(root=root, owner=(st.st_uid, st.st_gid), preexisting=pre)

    def take_back(self, chown: bool) -> list[str]:
        """Give the folder back; remove/strip what could trick the host. Returns violations.

        Call only once no sandbox process is left, so nothing can race the walk.
        """
        violations: list[str] = []
        uid, gid = self.owner
        for p, st in _walk(self.root):
            rel = str(p.relative_to(self.root))
            if not _is_plain(st):
                if (rel, st.st_ino) not in self.preexisting:
                    kind = "symlink" if stat.S_ISLNK(st.st_mode) else "special file"
                    violations.append(f"{kind} created in output: {rel}")
                    p.unlink()
                continue
            if chown:
                os.chown(p, uid, gid, follow_symlinks=False)
            if st.st_mode & (stat.S_ISUID | stat.S_ISGID) and stat.S_ISREG(st.st_mode):
                violations.append(f"setuid/setgid file in output: {rel}")
                os.chmod(p, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
        if chown:
            os.chown(self.root, uid, gid)
        return violations


def pid_namespace(pid: int | str) -> int | None:
    """Inode of the pid namespace of `pid`, or None if gone or not ours to see."""
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None


def sandbox_pids(ns_inode: int | None, uid: int | None = None) -> list[int]:
    """Host pids in pid namespace `ns_inode`, or (if given) running as `uid`.

    The uid test reads the owner of /proc/<pid>, which is the effective uid unless the
    process made itself non-dumpable; such a process is still caught by its namespace.
    Zombies are left out: they run nothing and only wait to be reaped.
    """
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            mine = uid is not None and os.stat(f"/proc/{name}").st_uid == uid
        except OSError:
            continue
        if not mine and (ns_inode is None or pid_namespace(name) != ns_inode):
            continue
        if not _zombie(name):
            found.append(int(name))
    return found


def _zombie(pid: str) -> bool:
    """A zombie is dead already; it only waits for its parent (or the host init) to reap it."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True  # gone


def namespace_cpu_seconds(ns_inode: int) -> float:
    """CPU time (own + reaped children) of every process now in pid namespace `ns_inode`."""
    ticks = 0
    for pid in sandbox_pids(ns_inode):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        ticks += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


async def ensure_gone(ns_inode: int | None, uid: int | None, deadline_s: float = 5.0) -> None:
    """SIGKILL whatever is left of a sandbox until nothing is; raise if that fails.

    Normally empty at once: the namespace's init (bwrap) takes every process with it when it
    dies and the reaper has waited for them all. This is the check that it did, and the
    safety net when it did not (say the reaper itself was killed).
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    while True:
        left = set(sandbox_pids(ns_inode, uid)) - {os.getpid()}
        if not left:
            return
        if loop.time() > end:
            raise SandboxError(f"sandbox processes survived SIGKILL: {sorted(left)}")
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.02)


def count_own_processes() -> int:
    """How many processes run as our uid (non-root mode adds these to RLIMIT_NPROC)."""
    return len(sandbox_pids(None, os.getuid()))
