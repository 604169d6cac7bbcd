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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from justkernel.settings.secrets import SecretsStore
    from justkernel.workers.host_probe import HostReport


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
    if len(argv) == 1:  # no version flag
        return Capability(name, True, path, needed_for)
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


CJK_FONT_DIRS = (Path("/usr/share/fonts/opentype/noto"), Path("/usr/share/fonts/truetype/noto"))


def _cjk_font() -> Capability:
    """Without a CJK font Chromium draws Chinese as boxes, in the page and in screenshots."""
    needed_for = "Chinese glyphs in the dashboard and its screenshots"
    for folder in CJK_FONT_DIRS:
        found = sorted(folder.glob("NotoSansCJK*")) if folder.is_dir() else []
        if found:
            return Capability("cjk-font", True, str(found[0]), needed_for)
    return Capability(
        "cjk-font", False, "no Noto CJK font", needed_for, "apt-get install fonts-noto-cjk"
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


GXX_MIN_MAJOR = 12  # the Ascend C library is C++17 with features older g++ lacks


def gxx_major(compiler: str = "g++") -> int | None:
    """The major version of `compiler` (`-dumpversion`), None when it does not run."""
    text = _version([compiler, "-dumpversion"])
    head = (text or "").split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _ascendc_cpu() -> Capability:
    """The ascendc-cpu toolchain: g++ >= 12, the Ascend C library, its harness and SoC file."""
    need = "the ascendc-cpu toolchain (Ascend C on this CPU, modelled cycles)"
    major = gxx_major()
    if major is not None and major < GXX_MIN_MAJOR:
        return Capability(
            "ascendc-cpu",
            False,
            f"g++ {major} found; the Ascend C library needs g++ >= {GXX_MIN_MAJOR}",
            need,
            f"install g++-{GXX_MIN_MAJOR} or newer, or use the C port: JUSTKERNEL_TOOLCHAIN=cpu",
        )
    try:
        from justkernel.toolchains.ascendc_cpu import AscendcCpuToolchain

        tc = AscendcCpuToolchain()
        missing = tc.missing()
    except Exception as exc:  # a broken definition or library is a finding, not a crash
        return Capability("ascendc-cpu", False, f"{type(exc).__name__}: {exc}", need)
    if missing:
        return Capability(
            "ascendc-cpu",
            False,
            "missing: " + "; ".join(missing),
            need,
            "apt-get install g++ (the library ships with the lab)",
        )
    facts = tc.version_info()
    detail = f"{tc.version} · {facts['gcc']} · SoC {facts['soc']['name']} · {facts['cycle_model']}"
    return Capability("ascendc-cpu", True, detail, need)


POSTGRES_TOOLS = ("initdb", "pg_ctl", "createdb")


def _major(folder: Path) -> int:
    """Debian's /usr/lib/postgresql/<major>/bin: the newest server wins."""
    name = folder.parent.name
    return int(name) if name.isdigit() else -1


def postgres_bin_dir(debian_root: Path = Path("/usr/lib/postgresql")) -> Path | None:
    """The folder with PostgreSQL's initdb, pg_ctl and createdb, of any version: the one PATH
    finds initdb in, else Debian's <debian_root>/<major>/bin (newest first; Debian does not put
    initdb on PATH)."""
    candidates: list[Path] = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    candidates += sorted(debian_root.glob("*/bin"), key=_major, reverse=True)
    for folder in candidates:
        if all(os.access(folder / tool, os.X_OK) for tool in POSTGRES_TOOLS):
            return folder
    return None


def postgres_capability(debian_root: Path = Path("/usr/lib/postgresql")) -> Capability:
    """PostgreSQL server binaries of any version, and (as root) runuser to start them."""
    needed_for = "PostgreSQL store tests (SQLite is the default store)"
    folder = postgres_bin_dir(debian_root)
    if folder is None:
        return Capability(
            "postgresql",
            False,
            "no PostgreSQL server binaries (initdb, pg_ctl, createdb) on PATH or in "
            "/usr/lib/postgresql/*/bin",
            needed_for,
            "apt-get install postgresql",
        )
    if _is_root() and shutil.which("runuser") is None:
        # initdb refuses to run as root: the tests start the server as the postgres user
        return Capability(
            "postgresql",
            False,
            f"{folder}, but runuser not found",
            needed_for,
            "apt-get install util-linux",
        )
    version = _version([str(folder / "initdb"), "--version"]) or "version unknown"
    return Capability("postgresql", True, f"{folder}: {version}", needed_for)


def _uv() -> Capability:
    """uv on PATH, or the one running us (`uv run` names itself in $UV)."""
    needed_for = "the packaging test (builds the wheel)"
    found = os.environ.get("UV") or shutil.which("uv")
    if found is None:
        return Capability(
            "uv", False, "uv not found on PATH", needed_for, "python3 -m pip install uv"
        )
    version = _version([found, "--version"]) or "version unknown"
    return Capability("uv", True, f"{found}: {version}", needed_for)


def _is_root() -> bool:
    return os.geteuid() == 0


def _root() -> Capability:
    needed_for = (
        "tests of the loopback sshd (the lab logs in as root), the sandbox uid pool and "
        "PostgreSQL run as its own user"
    )
    if _is_root():
        return Capability("root", True, "running as uid 0", needed_for)
    return Capability(
        "root",
        False,
        f"running as uid {os.geteuid()}",
        needed_for,
        "run ./start.sh test as root (CI does), or ./start.sh test --partial",
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
            "objdump",
            ["objdump", "--version"],
            "static checks of compiled kernels",
            "apt-get install binutils",
        ),
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
        _tool(
            "prlimit",
            ["prlimit", "--version"],
            "resource limits of sandboxed code",
            "apt-get install util-linux",
        ),
        _tool(
            "setpriv",
            ["setpriv", "--version"],
            "dropping to a pool uid in the sandbox (as root)",
            "apt-get install util-linux",
        ),
        _sandbox(),
        _tool(
            "sshd",
            ["/usr/sbin/sshd", "-V"],
            "SSH worker tests on loopback",
            "apt-get install openssh-server",
        ),
        _tool(
            "ssh-keygen",
            ["ssh-keygen"],
            "keys of the loopback SSH server in the worker tests",
            "apt-get install openssh-client",
        ),
        _chromium(),
        _cjk_font(),
        postgres_capability(),
        _tool(
            "git",
            ["git", "--version"],
            "team workspaces (every change is a commit)",
            "apt-get install git",
        ),
        _uv(),
        _root(),
        _ascendc_cpu(),
        _cann(),
    ]


def target_readiness(toolchain_id: str, caps: list[Capability]) -> tuple[bool, str]:
    """Whether the lab's default target can run here, as one line for `justkernel check`:
    what it needs, and how to switch to the C port when it cannot."""
    needs = {"ascendc-cpu": ("ascendc-cpu", "sandbox"), "cpu": ("gcc", "valgrind", "sandbox")}
    needs["cann"] = ("cann", "sandbox")
    by_name = {c.name: c for c in caps}
    missing = [
        f"{name} ({by_name[name].detail})"
        for name in needs.get(toolchain_id, ())
        if name in by_name and not by_name[name].present
    ]
    if not missing:
        return True, f"default target {toolchain_id}: ready"
    line = f"default target {toolchain_id}: not ready here, missing {'; '.join(missing)}"
    if toolchain_id != "cpu":
        line += (
            ". Switch to the C port with JUSTKERNEL_TOOLCHAIN=cpu (in .env or the environment), "
            "or per run: `justkernel run --toolchain cpu` / the dashboard's task settings"
        )
    return False, line


def suite_needs() -> tuple[str, ...]:
    """The capabilities `./start.sh test` needs: without one, tests would skip, and a skip
    fails the run (tests/conftest.py). CANN is not among them: its tests use a stand-in."""
    return (
        "gcc",
        "objdump",
        "valgrind",
        "bubblewrap",
        "prlimit",
        *(("setpriv",) if _is_root() else ()),
        "sandbox",
        "sshd",
        "ssh-keygen",
        "chromium",
        "cjk-font",
        "postgresql",
        "git",
        "uv",
        "root",
        "ascendc-cpu",
    )


def missing_for_tests(caps: list[Capability]) -> list[Capability]:
    """The capabilities the suite needs that this machine lacks."""
    needed = set(suite_needs())
    return [c for c in caps if c.name in needed and not c.present]


def host_capabilities(
    hosts_file: Path,
    secrets: SecretsStore | None = None,
    lab_versions: dict[str, str] | None = None,
) -> list[Capability]:
    """Rows per configured SSH host: reachable, auth ok, toolchain found (and whether its
    version equals this lab's, which decides whether its receipts are interchangeable), free
    scratch disk. A bad hosts file is a row of its own, not a crash."""
    from justkernel.settings.config import ConfigError
    from justkernel.workers.hosts import load_hosts

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
    import asyncio

    from justkernel.workers.host_probe import probe_hosts

    passwords, rows = _host_passwords(hosts, secrets)
    reports = asyncio.run(probe_hosts(hosts, passwords))
    if lab_versions is None:
        lab_versions = _lab_versions()
    for report in reports:
        rows += _host_rows(report, lab_versions)
    return rows


def _lab_versions() -> dict[str, str]:
    """This lab's toolchain versions, to tell whether a host's receipts are interchangeable."""
    try:
        from justkernel.toolchains.cpu import CpuToolchain

        versions = {"cpu": CpuToolchain().version}
    except Exception:
        return {}
    try:
        from justkernel.toolchains.ascendc_cpu import AscendcCpuToolchain

        versions["ascendc-cpu"] = AscendcCpuToolchain().version
    except Exception:
        pass
    return versions


def _same_as_lab(toolchain: dict, lab_versions: dict[str, str]) -> str:
    lab = lab_versions.get(toolchain["id"])
    if lab is None:
        return ""
    if lab == toolchain["version"]:
        return " (same as this lab)"
    return f" (this lab runs {lab}: receipts from this host are not interchangeable)"


def _host_passwords(hosts: list, secrets: SecretsStore | None) -> tuple[dict, list[Capability]]:
    """Passwords by host name from the secrets store; a missing secret is a row."""
    passwords: dict = {}
    rows: list[Capability] = []
    for host in hosts:
        if host.password_secret is None:
            continue
        if secrets is None:
            from justkernel.settings.config import load_settings
            from justkernel.settings.secrets import SecretsStore as Store

            secrets = Store(load_settings().config_dir)
        secret = secrets.get(host.password_secret)
        if secret is None:
            rows.append(
                Capability(
                    f"host {host.name} password",
                    False,
                    f"no secret named {host.password_secret!r} in the secrets store",
                    "remote workers",
                    f"justkernel secrets set {host.password_secret}",
                )
            )
        passwords[host.name] = secret
    return passwords, rows


def _host_rows(report: HostReport, lab_versions: dict[str, str]) -> list[Capability]:
    from justkernel.workers.host_probe import NOT_PROBED

    host = report.host
    need = "remote workers"
    where = f"{host.user}@{host.address}:{host.port} ({host.toolchain}, {host.slots} slots)"
    rows = [
        Capability(
            f"host {host.name}",
            report.reachable is None,
            where if report.reachable is None else f"{where}: {report.reachable}",
            need,
            "" if report.reachable is None else "check the address, port and that sshd runs",
        )
    ]
    skipped = "not probed: an earlier step failed"
    auth_ok = report.auth is None
    rows.append(
        Capability(
            f"host {host.name} auth",
            auth_ok,
            f"host {host.name}: logged in as {host.user}"
            if auth_ok
            else f"host {host.name}: {skipped if report.auth == NOT_PROBED else report.auth}",
            need,
            "" if auth_ok else "check key_file / password_secret and known_hosts",
        )
    )
    tc = report.toolchain
    if tc is not None and report.toolchain_error is None:
        same = _same_as_lab(tc, lab_versions)
        facts = ", ".join(str(v) for v in tc.get("facts", {}).values())
        detail = f"host {host.name}: {tc['id']} {tc['version']}{same}; {facts}"
        rows.append(Capability(f"host {host.name} toolchain", True, detail, need))
    else:
        error = report.toolchain_error
        rows.append(
            Capability(
                f"host {host.name} toolchain",
                False,
                f"host {host.name}: {skipped if error == NOT_PROBED else error}",
                need,
                "" if error == NOT_PROBED else "set worker_command to the host's justkernel",
            )
        )
    disk_ok = report.disk_error is None
    free = "" if report.free_bytes is None else f"{report.free_bytes / (1 << 20):,.0f} MiB free"
    rows.append(
        Capability(
            f"host {host.name} disk",
            disk_ok,
            f"host {host.name}: {host.scratch_dir} {free}"
            if disk_ok
            else f"host {host.name}: "
            f"{skipped if report.disk_error == NOT_PROBED else report.disk_error}",
            need,
            "" if disk_ok else "free space in scratch_dir or point it elsewhere",
        )
    )
    return rows
