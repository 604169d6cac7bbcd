"""Tiling data round trip: the host's SaveToBuffer and the kernel's GET_TILING_DATA agree on every
field kind, and the bytes follow the documented layout rule (the class's own layout: fields in
order at natural alignment, size = sizeof). Host and kernel are separate translation units built
as the toolchain builds them (kernel: -include the tiling header, -DJK_OP_TYPE)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess

import pytest

from tests.toolchains.ascendc_cpu.harness_support import FLAGS, LIBRARY, SOURCES, _compile_all


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not installed")
    root = tmp_path_factory.mktemp("round_trip")
    (root / "op_host").mkdir()
    (root / "op_kernel").mkdir()
    for name in ("rt_tiling.h", "rt_host.cpp"):
        shutil.copy(SOURCES / name, root / "op_host" / name)
    shutil.copy(SOURCES / "rt_kernel.cpp", root / "op_kernel" / "rt_kernel.cpp")
    shutil.copy(SOURCES / "rt_main.cpp", root / "rt_main.cpp")
    inc = f"-I{LIBRARY / 'include'}"
    kernel = ["-Iop_kernel", "-include", "op_host/rt_tiling.h", "-DJK_OP_TYPE=RoundTrip"]
    _compile_all(
        [
            ([gxx, *FLAGS, inc, "-Iop_host", "-c", "op_host/rt_host.cpp", "-o", "host.o"], root),
            ([gxx, *FLAGS, inc, *kernel, "-c", "op_kernel/rt_kernel.cpp", "-o", "k.o"], root),
            ([gxx, *FLAGS, "-c", "rt_main.cpp", "-o", "main.o"], root),
        ]
    )
    _compile_all([([gxx, "main.o", "host.o", "k.o", "-o", "rt"], root)])
    done = subprocess.run([str(root / "rt")], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_kernel_reads_what_the_host_wrote(round_trip: list[dict]) -> None:
    _, saved, loaded, named = round_trip
    assert loaded == {
        "flag": 0xA5,
        "count": 4000000000,
        "big": -1234567890123,
        "ratio": 0.375,
        "dims": [7, 65535, 300],
        "tag": 9,
        "width": 513,
        "last": -3,
        "size": saved["size"],
    }
    assert named == {"first_tag": 0xA5}  # GET_TILING_DATA_WITH_STRUCT reads the same bytes


def test_bytes_follow_the_natural_alignment_layout(round_trip: list[dict]) -> None:
    _, saved, _, _ = round_trip
    # flag u8 @0, count u32 @4, big i64 @8, ratio f32 @16, dims u16[3] @20, inner {u8 @26,
    # u16 @28} (align 2), last i8 @30; size rounded to the class's alignment (8) = 32.
    assert saved["size"] == 32
    raw = bytes.fromhex(saved["hex"])
    flag, count, big, ratio, d0, d1, d2, tag, width, last = struct.unpack_from("<B3xIqf3HBxHb", raw)
    assert (flag, count, big, ratio) == (0xA5, 4000000000, -1234567890123, 0.375)
    assert (d0, d1, d2, tag, width, last) == (7, 65535, 300, 9, 513, -3)
    assert raw[32:] == b"\xab" * 32  # nothing written past GetDataSize()


def test_save_to_a_too_small_buffer_writes_nothing(round_trip: list[dict]) -> None:
    assert round_trip[0] == {"small_size": 32, "small_untouched": True}
