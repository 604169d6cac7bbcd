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
