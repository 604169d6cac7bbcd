"""The fixed ascendc-cpu harness built with the probe operator (harness_cases/), once per session.

The probe is ours, not a team's: its host prints what the TilingContext holds and tiles rows
over two cores; its kernel computes output0 = input0 * input1 (output1 = zeros) with the real
library, in variants that misuse the API on purpose (probe_kernel.cpp says which). Built the way
the toolchain builds a project (relative paths from the project root, so misuse sites read
`op_kernel/probe_kernel.cpp:<line>`), but natively: these are trusted test programs.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from justkernel.operators.cases import CaseSpec, generate_inputs
from justkernel.operators.rawfiles import case_descriptor, raw_bytes
from justkernel.paths import resources_dir
from justkernel.toolchains.ascendc_cpu import soc

SOURCES = Path(__file__).parent / "harness_cases"
LIBRARY = resources_dir() / "ascendc_cpu"
VARIANTS = ("MUL", "RAW", "RACY", "CATCH", "TILING_WRITE", "SYNCALL")
FLAGS = ("-std=c++17", "-O0", "-fno-strict-aliasing")  # -O0: the cheapest compile


@dataclass(frozen=True)
class ProbeBuild:
    root: Path

    def harness(self, variant: str = "MUL") -> Path:
        return self.root / f"harness_{variant}"


def _compile_all(jobs: list[tuple[list[str], Path]]) -> None:
    procs = [
        (argv, subprocess.Popen(argv, cwd=cwd, stderr=subprocess.PIPE, text=True))
        for argv, cwd in jobs
    ]
    failures = []
    for argv, proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            failures.append(f"{' '.join(argv)}\n{err}")
    assert not failures, "\n\n".join(failures)


@cache
def probe_build() -> ProbeBuild:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not installed")
    root = Path(tempfile.mkdtemp(prefix="jk-harness-tests-"))
    atexit.register(shutil.rmtree, root, True)
    project = root / "project"
    (project / "op_host").mkdir(parents=True)
    (project / "op_kernel").mkdir()
    for name in ("probe_tiling.h", "probe_host.cpp"):
        shutil.copy(SOURCES / name, project / "op_host" / name)
    shutil.copy(SOURCES / "probe_kernel.cpp", project / "op_kernel" / "probe_kernel.cpp")
    generated = root / "generated"
    generated.mkdir()
    soc.write_params_header(generated / "jk_soc_params.h")
    inc = f"-I{LIBRARY / 'include'}"
    main = [gxx, *FLAGS, inc, f"-I{generated}", "-c", str(LIBRARY / "harness" / "harness_main.cpp")]
    jobs = [
        ([*main, "-o", str(root / "main.o")], root),
        (
            [gxx, *FLAGS, inc, "-Iop_host", "-c", "op_host/probe_host.cpp", "-o", "../host.o"],
            project,
        ),
    ]
    kernel = [*FLAGS, inc, "-Iop_kernel", "-include", "op_host/probe_tiling.h"]
    kernel += ["-DJK_OP_TYPE=ConfusionMulGrad", "-DDTYPE_INPUT0=float"]
    for v in VARIANTS:
        argv = [gxx, *kernel, f"-DPROBE_{v}", "-c", "op_kernel/probe_kernel.cpp"]
        jobs.append(([*argv, "-o", f"../kernel_{v}.o"], project))
    _compile_all(jobs)
    links = [
        ([gxx, "main.o", "host.o", f"kernel_{v}.o", "-o", f"harness_{v}"], root) for v in VARIANTS
    ]
    _compile_all(links)
    return ProbeBuild(root)


def make_case(
    folder: Path,
    shapes: tuple[tuple[int, ...], ...],
    dtype: str = "float32",
    axes: tuple[int, ...] = (1,),
    keep_dims: bool = False,
) -> tuple[np.ndarray, ...]:
    """A case folder as the input pack writes it; returns the inputs."""
    case = CaseSpec(
        id="probe",
        input0=shapes[0],
        input1=shapes[1],
        input2=shapes[2],
        dtype=dtype,
        axes=axes,
        keep_dims=keep_dims,
        distribution="symmetric",
        seed=7,
    )
    folder.mkdir(parents=True, exist_ok=True)
    inputs = generate_inputs(case)
    (folder / "case.txt").write_text(case_descriptor(case))
    for i, array in enumerate(inputs):
        (folder / f"input{i}.bin").write_bytes(raw_bytes(array))
    return tuple(inputs)


def run_harness(
    harness: Path, case_dir: Path, out_dir: Path, *flags: str, mode: str = ""
) -> subprocess.CompletedProcess[str]:
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "JK_PROBE_MODE": mode}
    argv = [str(harness), str(case_dir), str(out_dir), *flags]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
