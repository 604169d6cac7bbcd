"""What a tiling function sees: the harness fills gert::TilingContext from the case (shapes,
dtype, attributes by the OpDef's declaration order, defaults for attributes the case does not
set) and the platform from the SoC file; the host object OP_ADD registers needs no start-up code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from justkernel.toolchains.ascendc_cpu import soc
from tests.toolchains.ascendc_cpu.harness_support import make_case, probe_build, run_harness


def _probe(stderr: str) -> dict:
    lines = [line for line in stderr.splitlines() if line.startswith("PROBE ")]
    assert len(lines) == 1, stderr
    return json.loads(lines[0].removeprefix("PROBE "))


@pytest.mark.parametrize(
    ("shapes", "dtype", "axes", "keep_dims", "outputs"),
    [
        (((16, 64), (1, 64), (16, 64)), "float16", (0,), True, [[16, 64], [1, 64]]),
        (((3, 5, 7), (3, 5, 7), (5, 7)), "float32", (-1, 0), False, [[3, 5, 7], [5]]),
        (((4, 8), (4, 8), (4, 8)), "float32", (), False, [[4, 8], []]),
    ],
)
def test_tiling_context_carries_the_case(
    tmp_path: Path,
    shapes: tuple[tuple[int, ...], ...],
    dtype: str,
    axes: tuple[int, ...],
    keep_dims: bool,
    outputs: list[list[int]],
) -> None:
    make_case(tmp_path / "case", shapes, dtype, axes, keep_dims)
    # the probe tiling rejects on request: only the context matters here
    done = run_harness(probe_build().harness(), tmp_path / "case", tmp_path / "out", mode="reject")
    assert done.returncode == 5, done.stderr
    figures = soc.load_soc().figures
    size0 = 1
    for extent in shapes[0]:
        size0 *= extent
    assert _probe(done.stderr) == {
        "node": "ConfusionMulGrad",
        "inputs": [list(s) for s in shapes],
        "origin0": list(shapes[0]),
        "outputs": outputs,
        "dtype_tensor": dtype,
        "dtype_desc": dtype,
        "size0": size0,
        "attr_num": 3,
        "axes": list(axes),
        "axes_raw_size": len(axes),
        "keep_dims": keep_dims,
        "keep_dims_ptr": keep_dims,
        "scale": 1.5,  # declared default of an attribute the case does not set
        "missing_attr_is_null": True,
        "aiv": figures.vector_cores.value,
        "aic": figures.cube_cores.value,
        "core_num": figures.vector_cores.value,
        "ub": figures.ub_bytes.value,
        "ub_manager": figures.ub_bytes.value,
    }


def test_host_object_has_no_start_up_code() -> None:
    """OP_ADD defines jk_op_add_create/jk_op_add_type instead of a static registrar."""
    host = probe_build().root / "host.o"
    sections = subprocess.run(
        ["readelf", "-S", "-W", str(host)], capture_output=True, text=True, check=True
    ).stdout
    assert ".init_array" not in sections and ".ctors" not in sections
    symbols = subprocess.run(
        ["nm", "--defined-only", str(host)], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "jk_op_add_create" in symbols and "jk_op_add_type" in symbols
