"""Precision check, CANN style, with enough detail in the report to debug a failing kernel.

An element fails when |out - golden| > atol + rtol * |golden|, or when out is NaN; equal
infinities match. An output passes when its failures stay within the standard's allowance
(none at all for small outputs). A case passes when every output passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from justkernel.operators.definition import OperatorDefinition, PrecisionStandard, load_operator
from justkernel.operators.pack import InputPack
from justkernel.operators.rawfiles import check_raw_size

MAX_REPORTED_INDICES = 5
CHUNK_ELEMENTS = 1 << 18  # per step of a check: ~25 MB of work arrays at most (all failing)


@dataclass(frozen=True)
class OutputCheck:
    """Verdict for one output tensor of one case."""

    name: str
    passed: bool
    elements: int
    failures: int
    allowed_failures: int
    error_ratio: float
    max_abs_error: float  # over non-NaN outputs; inf if an output is inf where golden is not
    max_rel_error: float  # over elements with a non-zero golden
    nan_count: int
    first_failures: tuple[int, ...]  # flat C-order indices, at most five
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: non-finite numbers become None (shown as missing, never as 0)."""
        data = asdict(self)
        for key in ("error_ratio", "max_abs_error", "max_rel_error"):
            if not math.isfinite(data[key]):
                data[key] = None
        data["first_failures"] = list(self.first_failures)
        return data


@dataclass(frozen=True)
class CaseCheck:
    case_id: str
    passed: bool
    outputs: tuple[OutputCheck, ...]

    @property
    def message(self) -> str:
        bad = [o for o in self.outputs if not o.passed]
        return "; ".join(f"{o.name}: {o.message}" for o in bad)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "passed": self.passed,
            "outputs": [o.to_dict() for o in self.outputs],
        }


def _missing(name: str, elements: int, standard: PrecisionStandard, why: str) -> OutputCheck:
    return OutputCheck(
        name=name,
        passed=False,
        elements=elements,
        failures=elements,
        allowed_failures=standard.allowed_failures(elements),
        error_ratio=1.0,
        max_abs_error=math.inf,
        max_rel_error=math.inf,
        nan_count=0,
        first_failures=(),
        message=why,
    )


@dataclass
class _Tally:
    """What compare_output sums up over an output's chunks: counts, maxima and the first
    failing indices are exact whatever the chunking, so a verdict never depends on it."""

    failures: int = 0
    nan_count: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    first: list[int] = field(default_factory=list)
    unequal: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))

    def add(
        self, out: np.ndarray, ref: np.ndarray, offset: int, standard: PrecisionStandard
    ) -> None:
        """One chunk: elements equal to the golden in their own dtype are equal in float64 too,
        so they cannot fail and add 0 to every figure; only the others go through the float64
        analysis (a kernel output is mostly exact: most chunks end at the first comparison,
        made into a buffer reused for every chunk)."""
        if out.dtype == ref.dtype:
            if self.unequal.size < out.size:
                self.unequal = np.empty(out.size, dtype=bool)
            mask = np.not_equal(out, ref, out=self.unequal[: out.size])
            where = np.flatnonzero(mask)  # NaN != NaN: every NaN output is here
            if not where.size:
                return
            out, ref = out[where], ref[where]
        else:
            where = None
        out64 = np.asarray(out, dtype=np.float64)
        ref64 = np.asarray(ref, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(out64 - ref64)
            # inf - inf and -inf vs +inf must not slip through an infinite tolerance
            within = np.isfinite(diff) & (diff <= standard.atol + standard.rtol * np.abs(ref64))
            fails = ~(within | (out64 == ref64))
        failing = np.flatnonzero(fails)
        if where is not None:
            failing = where[failing]
        self.failures += int(failing.size)
        if len(self.first) < MAX_REPORTED_INDICES:
            wanted = MAX_REPORTED_INDICES - len(self.first)
            self.first += [offset + int(i) for i in failing[:wanted]]
        self.nan_count += int(np.isnan(out64).sum())
        finite_diff = diff[~np.isnan(diff)]
        if finite_diff.size:
            self.max_abs = max(self.max_abs, float(finite_diff.max()))
        nonzero = (ref64 != 0) & ~np.isnan(diff)
        with np.errstate(invalid="ignore", over="ignore"):
            rel = diff[nonzero] / np.abs(ref64[nonzero])
        if rel.size:
            self.max_rel = max(self.max_rel, float(rel.max()))

    def verdict(self, name: str, elements: int, standard: PrecisionStandard) -> OutputCheck:
        allowed = standard.allowed_failures(elements)
        passed = self.failures <= allowed
        message = ""
        if not passed:
            message = f"{self.failures} of {elements} elements out of tolerance (allowed {allowed})"
            if self.nan_count:
                message += f", {self.nan_count} NaN"
        return OutputCheck(
            name=name,
            passed=passed,
            elements=elements,
            failures=self.failures,
            allowed_failures=allowed,
            error_ratio=self.failures / elements if elements else 0.0,
            max_abs_error=self.max_abs,
            max_rel_error=self.max_rel,
            nan_count=self.nan_count,
            first_failures=tuple(self.first),
            message=message,
        )


def compare_output(
    name: str,
    output: np.ndarray,
    golden: np.ndarray,
    standard: PrecisionStandard,
    chunk: int = CHUNK_ELEMENTS,
) -> OutputCheck:
    """Compare one output against its golden, element by element, in float64, `chunk`
    elements at a time (the float64 copies of a wrong 4M-element output would be ~150 MB)."""
    if output.shape != golden.shape:
        return _missing(name, golden.size, standard, f"shape {output.shape} != {golden.shape}")
    flat_out, flat_ref = np.ravel(output), np.ravel(golden)
    tally = _Tally()
    for start in range(0, flat_ref.size, chunk):
        stop = start + chunk
        tally.add(flat_out[start:stop], flat_ref[start:stop], start, standard)
    return tally.verdict(name, int(flat_ref.size), standard)


def compare_output_files(
    name: str,
    output: Path,
    golden: Path,
    dtype: str,
    shape: tuple[int, ...],
    standard: PrecisionStandard,
    chunk: int = CHUNK_ELEMENTS,
) -> OutputCheck:
    """`compare_output` on two raw files, read `chunk` elements at a time: a check holds a
    few MB whatever the output's size (the lab checks every case of every job in its own
    process, several at once). A missing or wrongly sized output fails as a whole."""
    elements = int(np.prod(shape, dtype=np.int64))
    if not output.is_file():
        return _missing(name, elements, standard, f"{output.name} was not written")
    try:
        check_raw_size(output, dtype, shape)
    except ValueError as exc:
        return _missing(name, elements, standard, str(exc))
    check_raw_size(golden, dtype, shape)
    dt, native = np.dtype(dtype).newbyteorder("<"), np.dtype(dtype).newbyteorder("=")
    tally = _Tally()
    size = min(chunk, elements)
    out_buf, ref_buf = np.empty(size, dtype=dt), np.empty(size, dtype=dt)  # read into, reused
    with output.open("rb") as out_file, golden.open("rb") as ref_file:
        for start in range(0, elements, chunk):
            count = min(chunk, elements - start)
            out, ref = out_buf[:count], ref_buf[:count]
            wanted = count * dt.itemsize
            if out_file.readinto(out) != wanted or ref_file.readinto(ref) != wanted:
                return _missing(name, elements, standard, f"{output.name} changed while read")
            tally.add(
                out.astype(native, copy=False), ref.astype(native, copy=False), start, standard
            )
    return tally.verdict(name, elements, standard)


def check_case_outputs(
    pack: InputPack, case_id: str, out_dir: Path, definition: OperatorDefinition | None = None
) -> CaseCheck:
    """Check the output files a harness wrote into `out_dir` against the pack's goldens,
    streaming both (`compare_output_files`)."""
    definition = definition or load_operator()
    entry = pack.entry(case_id)
    case = entry.case
    standard = definition.precision_for(case.dtype)
    names = definition.harness.output_files
    results = [
        compare_output_files(
            name.removesuffix(".bin"),
            Path(out_dir) / name,
            entry.golden_dir / name,
            case.dtype,
            shape,
            standard,
        )
        for name, shape in zip(names, case.output_shapes, strict=True)
    ]
    return CaseCheck(case_id=case_id, passed=all(r.passed for r in results), outputs=tuple(results))


def check_pack_outputs(
    pack: InputPack,
    out_root: Path,
    case_ids: tuple[str, ...] | None = None,
    definition: OperatorDefinition | None = None,
) -> tuple[CaseCheck, ...]:
    """Check `out_root/<case_id>/` for each case (default: every case of the pack)."""
    ids = case_ids if case_ids is not None else pack.case_ids
    return tuple(check_case_outputs(pack, i, Path(out_root) / i, definition) for i in ids)
