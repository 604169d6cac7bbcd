"""Misuse checks of the ascendc-cpu vector APIs: each names the check and the caller's line.

repeatTimes above 255, masks past the lanes of the dtype, operands off 32 bytes, reads of UB
nothing wrote and accesses past a tensor; masked-off lanes are not reads. Unimplemented documented
APIs and unsupported dtypes fail at compile time with a message naming them.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from tests.toolchains.ascendc_cpu.ops_cases.driver import (
    Script,
    build_dir,
    library_include,
    run_ok,
    site_line,
)


def add_script(dt: str, n: int = 256) -> Script:
    return Script().alloc("a", dt, n, np.ones(n)).alloc("d", dt, n)


def assert_misuse(res, check: str, marker: str) -> None:
    assert res.returncode == 7, res
    assert res.misuse["check"] == check, res.misuse
    assert res.misuse["file"].endswith("ops_cases/ops_main.cpp")
    assert res.misuse["line"] == site_line(marker)


def test_repeat_times_above_255_is_misuse_at_the_callers_line() -> None:
    res = (
        add_script("f32")
        .call("BIN", "Add", "f32", "mask", "d", "a", "a", 64, 256, 1, 1, 1, 0, 0, 0)
        .run()
    )
    assert_misuse(res, "repeat_out_of_range", "add-mask")
    assert "256" in res.misuse["message"]


@pytest.mark.parametrize(
    ("dt", "mask", "ok"),
    [
        ("f32", 64, True),
        ("f32", 65, False),
        ("f16", 128, True),
        ("f16", 129, False),
        ("f32", 0, False),
    ],
)
def test_continuous_mask_range_depends_on_the_dtype(dt: str, mask: int, ok: bool) -> None:
    res = (
        add_script(dt)
        .call("BIN", "Add", dt, "mask", "d", "a", "a", mask, 1, 1, 1, 1, 8, 8, 8)
        .run()
    )
    if ok:
        assert res.misuse is None
    else:
        assert_misuse(res, "mask_out_of_range", "add-mask")


def test_an_all_zero_bitwise_mask_is_misuse() -> None:
    res = (
        add_script("f16")
        .call("BIN", "Sub", "f16", "bits", "d", "a", "a", 0, 0, 1, 1, 1, 1, 8, 8, 8)
        .run()
    )
    assert res.misuse["check"] == "mask_out_of_range"


def test_an_operand_off_32_bytes_is_misaligned() -> None:
    s = add_script("f32").view("a1", "a", 1)  # 4 bytes past a 32-byte boundary
    res = s.call("BIN", "Add", "f32", "count", "d", "a1", "a", 64).run()
    assert_misuse(res, "ub_misaligned", "add-count")
    assert "src0" in res.misuse["message"]


def test_reading_ub_nothing_wrote_names_the_vector_call() -> None:
    s = Script().alloc("a", "f32", 64, np.ones(64)).alloc("poison", "f32", 64).alloc("d", "f32", 64)
    res = s.call("BIN", "Add", "f32", "count", "d", "a", "poison", 64).run()
    assert_misuse(res, "ub_uninitialised_read", "add-count")


def test_masked_off_lanes_are_not_read() -> None:
    # only the first 8 floats of each source were written; a mask of 8 lanes reads just those
    s = Script().alloc("a", "f32", 64).fill("a", np.ones(8)).alloc("d", "f32", 64)
    run_ok(s.call("BIN", "Add", "f32", "mask", "d", "a", "a", 8, 1, 1, 1, 1, 8, 8, 8))
    res = s.call("BIN", "Add", "f32", "mask", "d", "a", "a", 9, 1, 1, 1, 1, 8, 8, 8).run()
    assert res.misuse["check"] == "ub_uninitialised_read"


def test_vector_writes_reach_the_hazard_checks_block_by_block() -> None:
    # V writes floats 8..63 (lanes 0..7 masked off); a scalar read of float 0 (untouched block)
    # needs no sync, a read of float 8 without WaitFlag<V_S> / PipeBarrier is a pipeline hazard
    # that names the reading line and the Add.
    s = Script().alloc("a", "f32", 64, np.ones(64)).alloc("d", "f32", 64, np.zeros(64))
    s.call(
        "BIN", "Add", "f32", "bits", "d", "a", "a", 0xFFFF_FFFF_FFFF_FF00, 0, 1, 1, 1, 1, 8, 8, 8
    )
    s.lines.append("peek d 0")
    assert run_ok(s).misuse is None
    s.lines.append("peek d 8")
    res = s.run()
    assert res.misuse["check"] == "pipeline_hazard"
    assert res.misuse["line"] == site_line("peek")
    assert "V (Add) wrote" in res.misuse["message"]


def test_a_count_past_the_tensor_is_out_of_bounds() -> None:
    res = add_script("f32", 256).call("BIN", "Add", "f32", "count", "d", "a", "a", 300).run()
    assert_misuse(res, "ub_out_of_bounds", "add-count")


KERNEL = """
#include "kernel_operator.h"
void use_select(AscendC::LocalTensor<float>& d, AscendC::LocalTensor<float>& a) {
  AscendC::Select(d, a, a, 64);
}
void use_int_div(AscendC::LocalTensor<int32_t>& d, AscendC::LocalTensor<int32_t>& a) {
  AscendC::Div(d, a, a, 64);
}
"""


def test_unimplemented_api_and_dtype_fail_to_compile_naming_them() -> None:
    src = build_dir() / "unsupported_use.cpp"
    src.write_text(KERNEL)
    cmd = ["g++", "-std=c++17", "-fsyntax-only", f"-I{library_include()}", str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert "ascendc-cpu does not implement AscendC::Select" in proc.stderr
    assert "ascendc-cpu: AscendC::Div supports half and float" in proc.stderr
