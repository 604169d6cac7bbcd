"""Seccomp deny-list for sandboxed candidate code (the innermost layer of `sandbox`).

Why a deny-list and not an allow-list: research found that a strict allow-list breaks
`clock_gettime` (vDSO fallbacks) and valgrind, which issues many unusual syscalls on the
guest's behalf. The namespaces and the unprivileged uid already take away what these calls
could reach; the filter is there to (1) shrink the kernel attack surface (io_uring, bpf,
userfaultfd, keyrings, new mount API ...) and (2) turn an attempted escape into an
unambiguous signal: the kernel kills the whole process with SIGSYS, which `sandbox` reports
as `sandbox_violation`. No numeric kernel or harness has a reason to make these calls.

The filter is raw classic BPF (what `bwrap --seccomp FD` loads), assembled here so that no
libseccomp binding is needed. Only x86_64 and aarch64 are known; on other machines
`deny_filter()` returns None and the sandbox runs without this layer (reported by
`sandbox_capabilities()`).
"""

from __future__ import annotations

import platform
import struct

# Syscalls a sandboxed program must never make. Numbers: x86_64 (asm/unistd_64.h), aarch64
# (asm-generic/unistd.h; None where the call does not exist). A test checks both tables
# against the system headers when they are installed.
DENIED_SYSCALLS: dict[str, tuple[int, int | None]] = {
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438),
    "kcmp": (312, 272),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "unshare": (272, 97),
    "setns": (308, 268),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "reboot": (169, 142),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "acct": (163, 89),
    "quotactl": (179, 60),
    "syslog": (103, 116),
    "iopl": (172, None),
    "ioperm": (173, None),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "fanotify_init": (300, 262),
    "settimeofday": (164, 170),
    "clock_settime": (227, 112),
    "adjtimex": (159, 171),
    "clock_adjtime": (305, 266),
    "lookup_dcookie": (212, 18),
}

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_SYSCALL_BIT = 0x40000000

# Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_KILL_PROCESS = 0x80000000
_RET_ALLOW = 0x7FFF0000
_OFF_NR = 0  # offsetof(struct seccomp_data, nr)
_OFF_ARCH = 4  # offsetof(struct seccomp_data, arch)


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def machine() -> str:
    """The machine name as the syscall tables know it."""
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def denied_numbers(arch: str) -> list[int]:
    """Syscall numbers of `DENIED_SYSCALLS` on `arch`."""
    column = 0 if arch == "x86_64" else 1
    return sorted({nrs[column] for nrs in DENIED_SYSCALLS.values() if nrs[column] is not None})


def deny_filter(arch: str | None = None) -> bytes | None:
    """The BPF program (array of `struct sock_filter`) for `bwrap --seccomp`, or None.

    Layout: wrong architecture -> kill; (x86_64) x32 ABI -> kill; one JEQ per denied number
    jumping to the final kill; otherwise allow.
    """
    arch = arch or machine()
    if arch not in _AUDIT_ARCH:
        return None
    numbers = denied_numbers(arch)
    prog = [
        _insn(_LD_W_ABS, _OFF_ARCH),
        _insn(_JEQ_K, _AUDIT_ARCH[arch], jt=1, jf=0),
        _insn(_RET_K, _RET_KILL_PROCESS),
        _insn(_LD_W_ABS, _OFF_NR),
    ]
    # Every jump below lands on the last instruction (kill); `left` counts what lies between.
    left = len(numbers) + 1  # the JEQs still to come plus the final allow
    if arch == "x86_64":
        prog.append(_insn(_JGE_K, _X32_SYSCALL_BIT, jt=left, jf=0))
    for nr in numbers:
        left -= 1
        prog.append(_insn(_JEQ_K, nr, jt=left, jf=0))
    prog += [_insn(_RET_K, _RET_ALLOW), _insn(_RET_K, _RET_KILL_PROCESS)]
    return b"".join(prog)
