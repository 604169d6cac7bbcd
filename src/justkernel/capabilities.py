"""What this machine can do: each capability present or missing, with the reason and the fix.

`justkernel check` prints this; other parts use it to pick a backend or to say clearly why a
job cannot run here (never to invent a number).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Capability:
    name: str
    present: bool
    detail: str
    needed_for: str
    fix: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0].strip() if text else None


def _tool(name: str, argv: list[str], needed_for: str, fix: str) -> Capability:
    path = shutil.which(argv[0])
    if path is None:
        return Capability(name, False, f"{argv[0]} not found on PATH", needed_for, fix)
    version = _version([path, *argv[1:]]) or "version unknown"
    return Capability(name, True, f"{path}: {version}", needed_for)


def _chromium() -> Capability:
    for candidate in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.access(candidate, os.X_OK):
            return Capability(
                "chromium", True, candidate, "dashboard browser tests and screenshots"
            )
    return Capability(
        "chromium",
        False,
        "no /usr/bin/chromium",
        "dashboard browser tests and screenshots",
        "apt-get install chromium",
    )


def _cann() -> Capability:
    home = os.environ.get("ASCEND_HOME_PATH") or os.environ.get("ASCEND_TOOLKIT_HOME")
    candidates = [Path(home)] if home else []
    candidates.append(Path("/usr/local/Ascend/ascend-toolkit/latest"))
    for root in candidates:
        if (root / "bin").is_dir() or (root / "tools").is_dir():
            msprof = shutil.which("msprof") or "msprof not on PATH"
            return Capability("cann", True, f"{root} ({msprof})", "the CANN toolchain")
    return Capability(
        "cann",
        False,
        "no CANN toolkit (ASCEND_HOME_PATH unset, /usr/local/Ascend absent)",
        "the CANN toolchain (the CPU toolchain works without it)",
        "install the CANN toolkit and `source set_env.sh`, or use an SSH host that has it",
    )


def _postgres() -> Capability:
    initdb = Path("/usr/lib/postgresql/15/bin/initdb")
    if initdb.exists():
        return Capability("postgresql", True, str(initdb.parent), "PostgreSQL store tests")
    return Capability(
        "postgresql",
        False,
        "no PostgreSQL server binaries",
        "PostgreSQL store tests (SQLite is the default store)",
        "apt-get install postgresql",
    )


def _sandbox() -> Capability:
    from justkernel.toolchains.sandbox import sandbox_capabilities

    caps = sandbox_capabilities()
    if caps.get("usable"):
        layers = ["prlimit", "setpriv" if caps.get("root") else None, "bwrap"]
        if caps.get("seccomp"):
            layers.append("seccomp")
        detail = " + ".join(layer for layer in layers if layer)
        return Capability("sandbox", True, detail, "running candidate code safely")
    return Capability(
        "sandbox",
        False,
        str(caps.get("error") or "unusable"),
        "running candidate code safely (no candidate runs without it)",
        "apt-get install bubblewrap util-linux; allow unprivileged user namespaces",
    )


def local_capabilities() -> list[Capability]:
    return [
        _tool("gcc", ["gcc", "--version"], "compiling CPU candidates", "apt-get install gcc"),
        _tool(
            "valgrind",
            ["valgrind", "--version"],
            "cycle simulation (cachegrind)",
            "apt-get install valgrind",
        ),
        _tool(
            "bubblewrap",
            ["bwrap", "--version"],
            "sandboxing candidate code",
            "apt-get install bubblewrap",
        ),
        _sandbox(),
        _tool(
            "sshd",
            ["/usr/sbin/sshd", "-V"],
            "SSH worker tests on loopback",
            "apt-get install openssh-server",
        ),
        _chromium(),
        _postgres(),
        _cann(),
    ]


def host_capabilities(hosts_file: Path) -> list[Capability]:
    """One row per configured SSH host: is it reachable over TCP? (Auth is probed by the
    SSH executor.) A bad hosts file is a row of its own, not a crash."""
    from justkernel.settings.config import ConfigError
    from justkernel.workers.hosts import load_hosts, tcp_reachable

    try:
        hosts = load_hosts(hosts_file)
    except ConfigError as exc:
        return [Capability("ssh hosts", False, str(exc), "remote workers", "fix the hosts file")]
    if not hosts:
        return [
            Capability(
                "ssh hosts",
                True,
                f"none configured ({hosts_file} absent or empty): local workers only",
                "remote workers",
            )
        ]
    rows = []
    for host in hosts:
        problem = tcp_reachable(host.address, host.port)
        where = f"{host.user}@{host.address}:{host.port} ({host.toolchain}, {host.slots} slots)"
        rows.append(
            Capability(
                f"host {host.name}",
                problem is None,
                where if problem is None else f"{where}: {problem}",
                "remote workers",
                "" if problem is None else "check the address, port and that sshd runs",
            )
        )
    return rows
