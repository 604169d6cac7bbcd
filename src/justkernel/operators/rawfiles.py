"""Raw little-endian tensor files and the small case descriptor the C harness reads.

Raw files (no header) keep the harness trivial and let anyone inspect a case with numpy.fromfile;
the shapes travel separately in `case.txt` and the pack manifest.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from justkernel.operators.cases import CaseSpec

DESCRIPTOR_VERSION = 1


def raw_bytes(array: np.ndarray) -> bytes:
    """C-order, little-endian bytes of an array: exactly what goes into a .bin file."""
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return np.ascontiguousarray(little).tobytes()


def check_raw_size(path: Path, dtype: np.dtype | str, shape: tuple[int, ...]) -> None:
    """Raise ValueError unless the .bin file holds exactly `shape` elements of `dtype`."""
    expected = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    size = path.stat().st_size
    if size != expected:
        raise ValueError(f"{path.name}: {size} bytes, expected {expected} for shape {shape}")


def read_raw(path: Path, dtype: np.dtype | str, shape: tuple[int, ...]) -> np.ndarray:
    """Read a .bin file, insisting its size matches the shape (a short file is a failed run)."""
    dt = np.dtype(dtype).newbyteorder("<")
    check_raw_size(path, dtype, shape)
    return np.fromfile(path, dtype=dt).reshape(shape).astype(dt.newbyteorder("="), copy=False)


def case_descriptor(case: CaseSpec) -> str:
    """`case.txt`: one `key values...` line per fact; shapes are `rank extent...`."""

    def shape(s: tuple[int, ...]) -> str:
        return " ".join(str(v) for v in (len(s), *s))

    lines = [
        f"cmg_case {DESCRIPTOR_VERSION}",
        f"id {case.id}",
        f"dtype {case.dtype}",
        *(f"input{i} {shape(s)}" for i, s in enumerate(case.shapes)),
        f"axes {shape(case.axes)}",
        f"keep_dims {int(case.keep_dims)}",
        f"output0 {shape(case.output0_shape)}",
        f"output1 {shape(case.output1_shape)}",
    ]
    return "\n".join(lines) + "\n"
