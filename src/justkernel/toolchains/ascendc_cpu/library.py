"""Where the clean-room Ascend C library lives, the g++ commands of the build contract, and the
facts that decide a result (they make the toolchain version, hence every job key).

All user code is compiled with paths relative to the staged project root (cwd), so the sites
the library records (`__builtin_FILE()`) read `op_kernel/confusion_mul_grad.cpp`, never a
host path, and the same source gives the same misuse record and trace from any folder.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from justkernel.operators.definition import AscendcTarget
from justkernel.paths import resources_dir

CXX = "g++"
# Team code at -O1: g++ spends most of a kernel's compile optimising the library's inline
# templates, and -O1 saves ~20 % of it while the harness runs as fast as at -O2 (measured on
# the baseline's perf cases). Neither level changes a result: no -ffast-math, no FP contraction
# in ISO C++ mode, no x87 on x86-64; outputs, run.json and trace.json were byte-identical.
# -DJK_ENGINE_EXTERN: the library's non-template functions (the engine, and the instruction
# bodies of DataCopy, the vector family, Cast and the reductions behind thin type-erased API
# templates, jk::ops) are only declared in team units and compiled once, at -O2, into the harness
# main (JK_ENGINE_IMPL there): a kernel unit optimises its own code only (~1.1 -> ~0.6 CPU-s).
CXXFLAGS = ("-std=c++17", "-O1", "-fno-strict-aliasing", "-DJK_ENGINE_EXTERN")
MAIN_CXXFLAGS = ("-std=c++17", "-O2", "-fno-strict-aliasing")  # the harness main, built once
CYCLE_MODEL = "ascendc-pipe/1"  # the per-pipe model of docs/simulation-and-judging.md
SOC = "ascend910b"
# Operator dtype -> (the DTYPE_* macro value, object/executable suffix)
DTYPES: dict[str, tuple[str, str]] = {"float32": ("float", "f32"), "float16": ("half", "f16")}
LIB_MOUNT = "/sandbox/lib"  # the library's include/ folder inside the compile sandbox


def library_dir() -> Path:
    return resources_dir() / "ascendc_cpu"


def include_dir() -> Path:
    return library_dir() / "include"


def harness_source() -> Path:
    return library_dir() / "harness" / "harness_main.cpp"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def header_digests(root: Path | None = None) -> list[tuple[str, str]]:
    """SHA-256 of every library header: a changed header is another toolchain version."""
    root = root or include_dir()
    if not root.is_dir():
        return []
    return sorted(
        (p.relative_to(root).as_posix(), _sha256(p)) for p in root.rglob("*") if p.is_file()
    )


def harness_digest() -> str | None:
    src = harness_source()
    return _sha256(src) if src.is_file() else None


# The precompiled library headers (`pch`): the header every unit's command line includes first,
# where it is mounted, and what it includes per unit kind (host tiling or kernel).
PCH_MOUNT = "/sandbox/pch"
PCH_HEADER = "jk_pch.h"
PCH_INCLUDES: dict[str, tuple[str, ...]] = {
    "host": (
        "register/op_def_registry.h",
        "register/tilingdata_base.h",
        "tiling/platform/platform_ascendc.h",
    ),
    "kernel": ("kernel_operator.h", "register/tilingdata_base.h"),
}


def unit_kind(unit: str) -> str:
    """host, or kernel for kernel_f32 / kernel_f16."""
    return "host" if unit == "host" else "kernel"


def pch_text(unit: str) -> str:
    lines = [f"#include <{h}>" for h in PCH_INCLUDES[unit_kind(unit)]]
    return "// The ascendc-cpu library headers, precompiled once per toolchain version.\n" + (
        "\n".join(lines) + "\n"
    )


@dataclass(frozen=True)
class Commands:
    """The g++ command lines of one target (sandbox paths; cwd is the project root). A unit
    and its precompiled header share `_flags` (g++ uses a PCH only under the same macros)."""

    target: AscendcTarget
    include: str = f"{LIB_MOUNT}/include"

    def _flags(self, unit: str) -> list[str]:
        flags = [CXX, *CXXFLAGS, f"-I{self.include}", "-Winvalid-pch"]
        if unit_kind(unit) == "kernel":
            macro = next(m for m, suffix in DTYPES.values() if f"kernel_{suffix}" == unit)
            flags.append(f"-DJK_OP_TYPE={self.target.op_type}")
            flags += [
                f"-DDTYPE_{name}={macro}"
                for name in ("INPUT0", "INPUT1", "INPUT2", "OUTPUT0", "OUTPUT1")
            ]
        return flags

    def pch(self, unit: str, out: str) -> tuple[str, ...]:
        """The unit's precompiled header, from `PCH_MOUNT` (read-only) into `out`."""
        return (*self._flags(unit), "-x", "c++-header", f"{PCH_MOUNT}/{PCH_HEADER}", "-o", out)

    def host(self, out: str) -> tuple[str, ...]:
        host_dir = str(Path(self.target.host_source).parent)
        # -save-temps keeps the preprocessed unit (.ii) for the source check, from the very
        # compile that made the object.
        return (
            *self._flags("host"),
            "-include",
            f"{PCH_MOUNT}/{PCH_HEADER}",
            f"-I{host_dir}",
            "-save-temps=obj",
            "-c",
            self.target.host_source,
            "-o",
            out,
        )

    def kernel(self, dtype: str, out: str) -> tuple[str, ...]:
        unit = f"kernel_{DTYPES[dtype][1]}"
        kernel_dir = str(Path(self.target.kernel_source).parent)
        return (
            *self._flags(unit),
            "-include",
            f"{PCH_MOUNT}/{PCH_HEADER}",
            f"-I{kernel_dir}",
            "-include",
            self.target.tiling_header,
            "-save-temps=obj",
            "-c",
            self.target.kernel_source,
            "-o",
            out,
        )

    @staticmethod
    def link(objects: tuple[str, ...], out: str, link_map: str) -> tuple[str, ...]:
        return (CXX, *objects, "-o", out, f"-Wl,-Map={link_map}")


def main_argv(include: Path, generated: Path, source: Path, out: Path) -> list[str]:
    """The trusted harness main, compiled natively once per toolchain version."""
    return [
        CXX,
        *MAIN_CXXFLAGS,
        f"-I{include}",
        f"-I{generated}",
        "-c",
        str(source),
        "-o",
        str(out),
    ]


def soc_facts() -> dict[str, Any]:
    """The SoC file's fingerprint (soc.py, H3), or why there is none."""
    try:
        from justkernel.toolchains.ascendc_cpu import soc

        return {"name": SOC, "fingerprint": soc.soc_fingerprint()}
    except Exception as exc:  # absent or broken: the toolchain reports it as missing
        return {"name": SOC, "fingerprint": None, "error": f"{type(exc).__name__}: {exc}"}


def write_soc_header(folder: Path) -> Path:
    """jk_soc_params.h for the harness main, generated from soc/ascend910b.toml."""
    from justkernel.toolchains.ascendc_cpu import soc

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "jk_soc_params.h"
    soc.write_params_header(path)
    return path
