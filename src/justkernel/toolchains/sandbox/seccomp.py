"""Seccomp deny-list for sandboxed candidate code (the innermost layer of `sandbox`).

Why a deny-list and not an allow-list: research found that a strict allow-list breaks
`clock_gettime` (vDSO fallbacks) and valgrind, which issues many unusual syscalls on the
guest's behalf. The namespaces and the unprivileged uid already take away what these calls
could reach; the filter is there to (1) shrink the kernel attack surface (io_uring, bpf,
userfaultfd, keyrings, new mount API ...) and (2) turn an attempted escape into an
unambiguous signal: the kernel kills the whole process with SIGSYS, which `sandbox` reports
as `sandbox_violation`. No numeric kernel or harness has a reason to make these calls.

A few calls are checked on their arguments (`ARG_CHECKED_SYSCALLS`): code may not appear at run
time, where the static byte scan (`cpu.objects`) never saw it. So `mprotect`/`pkey_mprotect`
with PROT_EXEC, `mmap` with PROT_EXEC that is writable or anonymous, `shmat` with SHM_EXEC, a
READ_IMPLIES_EXEC personality and `memfd_create` kill the process too. The dynamic loader still
works: the filter is installed before exec, and ld.so maps libraries read-only and executable
from their files, which stays allowed. valgrind's JIT needs anonymous RWX memory for its code
cache, so valgrind runs (`SandboxLimits.anonymous_exec`) allow anonymous executable mappings;
there the guest's code is translated by valgrind and never runs natively.

The filter is raw classic BPF (what `bwrap --seccomp FD` loads), assembled here so that no
libseccomp binding is needed. Only x86_64 and aarch64 are known; on other machines
`deny_filter()` returns None and the sandbox runs without this layer (reported by
`sandbox_capabilities()`).
"""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass, field

from justkernel.toolchains.sandbox.types import SandboxLimits

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

# Calls allowed only with some arguments, so that no code can appear at run time that the
# static scan (cpu.objects) never saw: no executable memory the program can write (the loader's
# read-only file mappings of libraries stay allowed), no READ_IMPLIES_EXEC personality, no
# memfd to map as code. Same numbering as above; a test checks them against the headers.
ARG_CHECKED_SYSCALLS: dict[str, tuple[int, int | None]] = {
    "mmap": (9, 222),
    "mprotect": (10, 226),
    "pkey_mprotect": (329, 288),
    "shmat": (30, 196),
    "personality": (135, 92),
    "memfd_create": (319, 279),
}
PROT_WRITE = 0x2
PROT_EXEC = 0x4
MAP_ANONYMOUS = 0x20
SHM_EXEC = 0o100000
READ_IMPLIES_EXEC = 0x0400000
_PERSONALITY_QUERY = 0xFFFFFFFF  # personality(0xffffffff) only reads the current value

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_SYSCALL_BIT = 0x40000000

# Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_KILL_PROCESS = 0x80000000
_RET_ALLOW = 0x7FFF0000
_OFF_NR = 0  # offsetof(struct seccomp_data, nr)
_OFF_ARCH = 4  # offsetof(struct seccomp_data, arch)
KILL, ALLOW = "kill", "allow"  # labels of the two final instructions


def _arg(i: int) -> int:
    """offsetof(struct seccomp_data, args[i]), low 32 bits (little-endian machines only)."""
    return 16 + 8 * i


def machine() -> str:
    """The machine name as the syscall tables know it."""
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def _column(arch: str) -> int:
    return 0 if arch == "x86_64" else 1


def denied_numbers(arch: str) -> list[int]:
    """Syscall numbers of `DENIED_SYSCALLS` on `arch`."""
    column = _column(arch)
    return sorted({nrs[column] for nrs in DENIED_SYSCALLS.values() if nrs[column] is not None})


def _nr(name: str, arch: str) -> int:
    nr = ARG_CHECKED_SYSCALLS[name][_column(arch)]
    assert nr is not None
    return nr


@dataclass
class _Program:
    """Classic BPF with symbolic jump targets, resolved by `assemble` (jumps go forward only)."""

    code: list[tuple[int, int, str | None, str | None]] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)

    def op(self, code: int, k: int, jt: str | None = None, jf: str | None = None) -> None:
        self.code.append((code, k, jt, jf))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = []
        for pc, (code, k, jt, jf) in enumerate(self.code):
            offsets = [0 if t is None else self.labels[t] - pc - 1 for t in (jt, jf)]
            if not all(0 <= o <= 255 for o in offsets):
                raise ValueError(f"BPF jump out of range at {pc}: {offsets}")
            out.append(struct.pack("=HBBI", code, offsets[0], offsets[1], k))
        return b"".join(out)


def _flag_rule(p: _Program, name: str, arg: int, bits: int) -> None:
    """`name`: kill when any of `bits` is set in argument `arg`, else allow."""
    p.label(name)
    p.op(_LD_W_ABS, _arg(arg))
    p.op(_JSET_K, bits, jt=KILL, jf=ALLOW)


def _mmap_rule(p: _Program, anonymous_exec: bool) -> None:
    """mmap with PROT_EXEC: only a read-only file mapping (how ld.so maps a library), unless
    `anonymous_exec`, which also allows anonymous ones (valgrind's JIT maps its code cache
    anonymous and RWX)."""
    p.label("mmap")
    p.op(_LD_W_ABS, _arg(2))
    p.op(_JSET_K, PROT_EXEC, jf=ALLOW)
    p.op(_LD_W_ABS, _arg(3))
    p.op(_JSET_K, MAP_ANONYMOUS, jt=ALLOW if anonymous_exec else KILL)
    p.op(_LD_W_ABS, _arg(2))
    p.op(_JSET_K, PROT_WRITE, jt=KILL, jf=ALLOW)


def deny_filter(arch: str | None = None, *, anonymous_exec: bool = False) -> bytes | None:
    """The BPF program (array of `struct sock_filter`) for `bwrap --seccomp`, or None.

    Layout: wrong architecture -> kill; (x86_64) x32 ABI -> kill; each denied number -> kill;
    each argument-checked call -> its rule; otherwise allow. `anonymous_exec` allows anonymous
    executable mappings, for valgrind only (its guest code is translated, never run natively).
    """
    arch = arch or machine()
    if arch not in _AUDIT_ARCH:
        return None
    p = _Program()
    p.op(_LD_W_ABS, _OFF_ARCH)
    p.op(_JEQ_K, _AUDIT_ARCH[arch], jf=KILL)
    p.op(_LD_W_ABS, _OFF_NR)
    if arch == "x86_64":
        p.op(_JGE_K, _X32_SYSCALL_BIT, jt=KILL)
    for nr in denied_numbers(arch):
        p.op(_JEQ_K, nr, jt=KILL)
    p.op(_JEQ_K, _nr("memfd_create", arch), jt=KILL)
    rules = {"mmap": "mmap", "mprotect": "prot", "pkey_mprotect": "prot", "shmat": "shmat"}
    rules["personality"] = "personality"
    for call, rule in rules.items():
        p.op(_JEQ_K, _nr(call, arch), jt=rule)
    p.op(_RET_K, _RET_ALLOW)
    _mmap_rule(p, anonymous_exec)
    _flag_rule(p, "prot", 2, PROT_EXEC)
    _flag_rule(p, "shmat", 2, SHM_EXEC)
    p.label("personality")
    p.op(_LD_W_ABS, _arg(0))
    p.op(_JEQ_K, _PERSONALITY_QUERY, jt=ALLOW)
    p.op(_JSET_K, READ_IMPLIES_EXEC, jt=KILL, jf=ALLOW)
    p.label(ALLOW)
    p.op(_RET_K, _RET_ALLOW)
    p.label(KILL)
    p.op(_RET_K, _RET_KILL_PROCESS)
    return p.assemble()


def filter_for(limits: SandboxLimits) -> bytes | None:
    """The filter a run with these limits gets (None: seccomp off or an unknown machine)."""
    return deny_filter(anonymous_exec=limits.anonymous_exec) if limits.seccomp else None
