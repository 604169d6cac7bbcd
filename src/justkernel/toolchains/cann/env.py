"""Is CANN installed here, and which version? Everything the CANN pipeline needs, or a list of
what is missing (so a job says `toolchain_unavailable` with reasons instead of failing late).

Where things are looked for (CANN toolkit layout, assumptions in docs/simulation-and-judging.md):

- toolkit root (ASCEND_HOME_PATH): the explicit argument, else $ASCEND_HOME_PATH, else
  $ASCEND_TOOLKIT_HOME, else /usr/local/Ascend/ascend-toolkit/latest, else
  ~/Ascend/ascend-toolkit/latest;
- set_env.sh: next to `latest` (`ascend-toolkit/set_env.sh`), in the root, or
  `<root>/bin/setenv.bash`;
- version: `version=` in `<root>/<arch>-linux/ascend_toolkit_install.info`;
- msprof and cmake: on PATH after sourcing set_env.sh (msprof also in `<root>/bin`,
  `<root>/tools/profiler/bin`);
- simulator: `<root>/tools/simulator/<soc>/lib` (simulator mode only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from justkernel.toolchains.cann.commands import (
    SET_ENV_FAILED,
    capture_env_argv,
    parse_env0,
    simulator_lib,
)

Mode = Literal["simulator", "device"]
DEFAULT_HOMES = (
    Path("/usr/local/Ascend/ascend-toolkit/latest"),
    Path("~/Ascend/ascend-toolkit/latest"),
)
SET_ENV_TIMEOUT = 60
# What CANN's tools may see of the lab's environment: candidate code (the tiling, build.sh of a
# changed template) runs in these processes, so API keys and tokens must not be in it.
PASSED_VARIABLES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM", "SHELL"}
    | {"LD_LIBRARY_PATH", "PYTHONPATH"}
)
PASSED_PREFIXES = ("ASCEND_", "TOOLCHAIN_", "ASCENDC_")


@dataclass(frozen=True)
class CannProbe:
    """What was found; `missing` names each absent piece (empty: the toolchain can run)."""

    ascend_home: Path | None = None
    set_env: Path | None = None
    version: str | None = None
    env: dict[str, str] | None = field(default=None, repr=False)  # after set_env.sh
    bash: str | None = None
    msprof: str | None = None
    cmake: str | None = None
    simulator_lib: Path | None = None
    missing: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        return not self.missing

    def facts(self) -> dict[str, object]:
        """For the toolchain version: what can change a result (no environment dump)."""
        return {
            "ascend_home": str(self.ascend_home) if self.ascend_home else None,
            "cann_version": self.version,
            "msprof": self.msprof,
            "cmake": self.cmake,
            "simulator_lib": str(self.simulator_lib) if self.simulator_lib else None,
            "missing": list(self.missing),
        }


def cann_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed part of `environ` that CANN's commands start from."""
    return {
        k: v for k, v in environ.items() if k in PASSED_VARIABLES or k.startswith(PASSED_PREFIXES)
    }


def candidate_homes(ascend_home: Path | None, environ: Mapping[str, str]) -> list[Path]:
    if ascend_home is not None:
        return [Path(ascend_home).expanduser()]
    named = [environ.get("ASCEND_HOME_PATH"), environ.get("ASCEND_TOOLKIT_HOME")]
    return [Path(p).expanduser() for p in named if p] + [p.expanduser() for p in DEFAULT_HOMES]


def find_set_env(home: Path) -> Path | None:
    for candidate in (home.parent / "set_env.sh", home / "set_env.sh", home / "bin/setenv.bash"):
        if candidate.is_file():
            return candidate
    return None


def read_cann_version(home: Path) -> str | None:
    """`version=` of the toolkit's install info (e.g. `8.0.RC3`), None when absent."""
    infos = [*sorted(home.glob("*-linux/ascend_toolkit_install.info"))]
    for info in [*infos, home / "ascend_toolkit_install.info"]:
        try:
            lines = info.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            key, sep, value = line.partition("=")
            if sep and key.strip().lower() == "version" and value.strip():
                return value.strip()
    return None


def source_set_env(bash: str, set_env: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment set_env.sh produces; raises RuntimeError with the reason on failure."""
    try:
        done = subprocess.run(
            capture_env_argv(bash, set_env),
            env=dict(environ),
            capture_output=True,
            timeout=SET_ENV_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"{set_env}: {exc}") from None
    if done.returncode == SET_ENV_FAILED:
        raise RuntimeError(f"sourcing {set_env} failed")
    if done.returncode != 0:
        raise RuntimeError(f"{set_env}: exit {done.returncode}")
    return parse_env0(done.stdout)


def _executable(path: Path) -> str | None:
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def probe_cann(
    soc_version: str,
    *,
    mode: Mode = "simulator",
    ascend_home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> CannProbe:
    """Look for every piece the pipeline needs; never raises for a missing one."""
    environ = cann_environ(os.environ if environ is None else environ)
    missing: list[str] = []
    bash = shutil.which("bash", path=environ.get("PATH"))
    if bash is None:
        missing.append("bash (not on PATH)")
    homes = candidate_homes(ascend_home, environ)
    home = next((h for h in homes if h.is_dir()), None)
    if home is None:
        tried = ", ".join(str(h) for h in homes)
        missing.append(f"CANN toolkit (ASCEND_HOME_PATH: none of {tried} exists)")
        missing += ["set_env.sh (comes with the toolkit)", "msprof (comes with the toolkit)"]
        cmake = shutil.which("cmake", path=environ.get("PATH"))
        if cmake is None:
            missing.append("cmake (not on PATH)")
        if mode == "simulator":
            missing.append(f"simulator for {soc_version} (comes with the toolkit)")
        return CannProbe(bash=bash, cmake=cmake, missing=tuple(missing))
    set_env = find_set_env(home)
    env: dict[str, str] | None = None
    if set_env is None:
        missing.append(f"set_env.sh (not next to {home})")
    elif bash is not None:
        try:
            env = source_set_env(bash, set_env, environ)
        except RuntimeError as exc:
            missing.append(f"set_env.sh ({exc})")
    search = (env or environ).get("PATH")
    msprof = shutil.which("msprof", path=search) or next(
        filter(None, (_executable(home / d / "msprof") for d in ("bin", "tools/profiler/bin"))),
        None,
    )
    if msprof is None:
        missing.append(f"msprof (not on PATH after set_env.sh, not in {home}/tools/profiler/bin)")
    cmake = shutil.which("cmake", path=search)
    if cmake is None:
        missing.append("cmake (not on PATH)")
    sim = simulator_lib(home, soc_version)
    if mode == "simulator" and not sim.is_dir():
        missing.append(f"simulator for {soc_version} ({sim} absent)")
    return CannProbe(
        ascend_home=home,
        set_env=set_env,
        version=read_cann_version(home),
        env=env,
        bash=bash,
        msprof=msprof,
        cmake=cmake,
        simulator_lib=sim if sim.is_dir() else None,
        missing=tuple(missing),
    )
