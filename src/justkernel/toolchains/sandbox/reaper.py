"""Subreaper that starts the sandbox chain, reaps every process of it, reports rusage.

Run as a script (`python -I -S reaper.py REPORT_FD LAB_PID CMD...`), never imported:
it must start fast and depend on nothing but the standard library.

Why it exists: bwrap's outer process exits as soon as the sandboxed command has exited,
without waiting for the sandbox's pid-namespace init. That init (which has reaped the
command, and so holds its CPU time) is then orphaned to the host's init: its CPU time is
lost, and in a container without a proper init it lingers as a zombie that still counts
against the sandbox uid's RLIMIT_NPROC. As a child subreaper this process adopts it, reaps
it (and anything else) with wait(), and so knows the CPU time of the whole tree.

It also dies with the lab: it runs in a session of its own (so a Ctrl-C reaches the lab only),
and without PR_SET_PDEATHSIG a SIGKILLed lab would leave it and its sandbox running until their
own limits. With it, the kernel SIGKILLs the reaper when the lab (LAB_PID) dies; bwrap, started
with --die-with-parent, follows, and its pid-namespace init takes every sandbox process along.
"""

import ctypes
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    report_fd, lab_pid, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    os.set_inheritable(report_fd, False)
    libc = ctypes.CDLL(None, use_errno=True)
    for option, value in ((PR_SET_PDEATHSIG, signal.SIGKILL), (PR_SET_CHILD_SUBREAPER, 1)):
        if libc.prctl(option, int(value), 0, 0, 0) != 0:
            print(f"sandbox reaper: prctl: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
            return 125
    if os.getppid() != lab_pid:  # the lab died before the death signal was armed
        return 125
    pid = os.fork()
    if pid == 0:
        try:
            # Python starts with SIGPIPE and SIGXFSZ ignored, and exec keeps ignored signals:
            # restore them, or RLIMIT_FSIZE would give EFBIG instead of SIGXFSZ.
            for sig in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    status = None
    while True:
        try:
            child, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if child == pid:
            status = st
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    # "WAIT_STATUS CPU_SECONDS"; no json: importing it would double the start-up time.
    os.write(
        report_fd, f"{'-' if status is None else status} {ru.ru_utime + ru.ru_stime!r}".encode()
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
