"""Every command the CANN pipeline runs, as pure functions: argv lists and environment dicts.

Kept free of I/O so each command line can be tested exactly and reviewed in one place:

    source set_env.sh (once)  bash -c 'source "$1" ... && env -0' justkernel-set-env <set_env.sh>
    build                     bash build.sh                       (cwd: private project copy)
    install                   bash build_out/custom_opp_<os>_<arch>.run --install-path=<vendor>
    example (cmake)           cmake -S examples -B <build> -DCMAKE_BUILD_TYPE=Release
                                    -DASCEND_HOME_PATH=<toolkit> -DCUSTOM_OPP_PATH=<vendor>
                              cmake --build <build> -j N
    functional case           <example> <case_dir> <out_dir>
    simulated perf case       msprof op simulator --soc-version=<soc> --output=<dir> <example> ...
    device perf case          msprof op --output=<dir> --launch-count=1 <example> ...

The installed package lives at `<vendor root>/vendors/<vendor_name>`; the example finds it
through ASCEND_CUSTOM_OPP_PATH and its op_api library through LD_LIBRARY_PATH (CANN's
documented variables). The simulator finds `libruntime_camodel.so` through LD_LIBRARY_PATH
(`<ASCEND_HOME_PATH>/tools/simulator/<soc>/lib`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

BUILD_SCRIPT = "build.sh"
BUILD_OUT = "build_out"
RUN_PACKAGE_GLOB = "custom_opp_*.run"
SET_ENV_FAILED = 97  # exit code of the capture command when set_env.sh itself fails
_CAPTURE = 'source "$1" >/dev/null 2>&1 || exit 97; exec env -0'


def capture_env_argv(bash: str, set_env: Path) -> list[str]:
    """Source CANN's set_env.sh once and print the resulting environment (NUL-separated), so
    every later command gets that environment without a shell in between."""
    return [bash, "-c", _CAPTURE, "justkernel-set-env", str(set_env)]


def parse_env0(data: bytes) -> dict[str, str]:
    """The output of `env -0`: NAME=value records separated by NUL (values may hold '\\n')."""
    env = {}
    for record in data.split(b"\0"):
        if not record:
            continue
        name, sep, value = record.decode("utf-8", "surrogateescape").partition("=")
        if sep and name:
            env[name] = value
    return env


def build_argv(bash: str) -> list[str]:
    return [bash, BUILD_SCRIPT]


def install_argv(bash: str, run_package: Path, vendor_root: Path) -> list[str]:
    """The makeself package is run through bash, so a missing exec bit does not matter."""
    return [bash, str(run_package), f"--install-path={vendor_root}"]


def vendor_dir(vendor_root: Path, vendor_name: str) -> Path:
    return Path(vendor_root) / "vendors" / vendor_name


def _prepend(env: dict[str, str], name: str, value: str) -> None:
    old = env.get(name)
    env[name] = f"{value}:{old}" if old else value


def runtime_env(env: Mapping[str, str], vendor_root: Path, vendor_name: str) -> dict[str, str]:
    """`env` plus the installed custom package first on ASCEND_CUSTOM_OPP_PATH and its op_api
    library first on LD_LIBRARY_PATH."""
    out = dict(env)
    vendor = vendor_dir(vendor_root, vendor_name)
    _prepend(out, "ASCEND_CUSTOM_OPP_PATH", str(vendor))
    _prepend(out, "LD_LIBRARY_PATH", str(vendor / "op_api" / "lib"))
    return out


def simulator_lib(ascend_home: Path, soc_version: str) -> Path:
    return Path(ascend_home) / "tools" / "simulator" / soc_version / "lib"


def simulator_env(env: Mapping[str, str], ascend_home: Path, soc_version: str) -> dict[str, str]:
    out = dict(env)
    _prepend(out, "LD_LIBRARY_PATH", str(simulator_lib(ascend_home, soc_version)))
    return out


def example_configure_argv(
    cmake: str, source: Path, build: Path, ascend_home: Path, vendor: Path
) -> list[str]:
    return [
        cmake,
        "-S",
        str(source),
        "-B",
        str(build),
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DASCEND_HOME_PATH={ascend_home}",
        f"-DCUSTOM_OPP_PATH={vendor}",
    ]


def example_build_argv(cmake: str, build: Path, jobs: int = 4) -> list[str]:
    return [cmake, "--build", str(build), "-j", str(max(1, jobs))]


def example_argv(example: Path, case_dir: Path, out_dir: Path) -> list[str]:
    """The aclnn example's contract (the same as the CPU harness): read case.txt and
    input{0,1,2}.bin from case_dir, write output{0,1}.bin into out_dir, exit 0."""
    return [str(example), str(case_dir), str(out_dir)]


def msprof_simulator_argv(
    msprof: str,
    soc_version: str,
    output: Path,
    program: Sequence[str],
    *,
    kernel_name: str | None = None,
) -> list[str]:
    argv = [msprof, "op", "simulator", f"--soc-version={soc_version}", f"--output={output}"]
    if kernel_name:
        argv.append(f"--kernel-name={kernel_name}")
    return [*argv, *program]


def msprof_device_argv(
    msprof: str, output: Path, program: Sequence[str], *, kernel_name: str | None = None
) -> list[str]:
    argv = [msprof, "op", f"--output={output}"]
    if kernel_name:
        argv.append(f"--kernel-name={kernel_name}")
    return [*argv, "--launch-count=1", *program]


def patch_presets(presets: Mapping[str, Any], cann_path: Path) -> dict[str, Any]:
    """CMakePresets.json with ASCEND_CANN_PACKAGE_PATH pointing at this host's toolkit (the
    template's value is the author's machine). Only the private build copy is patched."""
    out = copy.deepcopy(dict(presets))
    for preset in out.get("configurePresets", []):
        cache = preset.get("cacheVariables")
        if not isinstance(cache, dict) or "ASCEND_CANN_PACKAGE_PATH" not in cache:
            continue
        var = cache["ASCEND_CANN_PACKAGE_PATH"]
        if isinstance(var, dict):
            var["value"] = str(cann_path)
        else:
            cache["ASCEND_CANN_PACKAGE_PATH"] = str(cann_path)
    return out
