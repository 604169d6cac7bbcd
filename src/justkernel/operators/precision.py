"""Precision check, CANN style, with enough detail in the report to debug a failing kernel.

An element fails when |out - golden| > atol + rtol * |golden|, or when out is NaN; equal
infinities match. An output passes when its failures stay within the standard's allowance
(none at all for small outputs). A case passes when every output passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from justkernel.operators.definition import OperatorDefinition, PrecisionStandard, load_operator
from justkernel.operators.pack import InputPack
from justkernel.operators.rawfiles import read_raw

MAX_REPORTED_INDICES = 5


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


def compare_output(
    name: str, output: np.ndarray, golden: np.ndarray, standard: PrecisionStandard
) -> OutputCheck:
    """Compare one output against its golden, element by element, in float64.

    Elements equal to the golden in their own dtype are equal in float64 too: they cannot fail
    and add 0 to every error figure, so only the others go through the float64 analysis (a
    kernel output is mostly exact: one comparison pass instead of a dozen over 1M elements)."""
    if output.shape != golden.shape:
        return _missing(name, golden.size, standard, f"shape {output.shape} != {golden.shape}")
    flat_out, flat_ref = np.ravel(output), np.ravel(golden)
    elements = int(flat_ref.size)
    if flat_out.dtype == flat_ref.dtype:
        where = np.flatnonzero(flat_out != flat_ref)  # NaN != NaN: every NaN output is here
        flat_out, flat_ref = flat_out[where], flat_ref[where]
    else:
        where = None
    out = np.asarray(flat_out, dtype=np.float64)
    ref = np.asarray(flat_ref, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(out - ref)
        # inf - inf and -inf vs +inf must not slip through an infinite tolerance
        within = np.isfinite(diff) & (diff <= standard.atol + standard.rtol * np.abs(ref))
        fails = ~(within | (out == ref))
    failing = np.flatnonzero(fails)
    if where is not None:
        failing = where[failing]
    nan_count = int(np.isnan(out).sum())
    finite_diff = diff[~np.isnan(diff)]
    max_abs = float(finite_diff.max()) if finite_diff.size else 0.0
    nonzero = (ref != 0) & ~np.isnan(diff)
    with np.errstate(invalid="ignore", over="ignore"):
        rel = diff[nonzero] / np.abs(ref[nonzero])
    max_rel = float(rel.max()) if rel.size else 0.0
    allowed = standard.allowed_failures(elements)
    passed = failing.size <= allowed
    message = ""
    if not passed:
        message = f"{failing.size} of {elements} elements out of tolerance (allowed {allowed})"
        if nan_count:
            message += f", {nan_count} NaN"
    return OutputCheck(
        name=name,
        passed=passed,
        elements=elements,
        failures=int(failing.size),
        allowed_failures=allowed,
        error_ratio=failing.size / elements if elements else 0.0,
        max_abs_error=max_abs,
        max_rel_error=max_rel,
        nan_count=nan_count,
        first_failures=tuple(int(i) for i in failing[:MAX_REPORTED_INDICES]),
        message=message,
    )


def check_case_outputs(
    pack: InputPack, case_id: str, out_dir: Path, definition: OperatorDefinition | None = None
) -> CaseCheck:
    """Check the output files a harness wrote into `out_dir` against the pack's goldens."""
    definition = definition or load_operator()
    entry = pack.entry(case_id)
    case = entry.case
    standard = definition.precision_for(case.dtype)
    goldens = pack.load_golden(case_id)
    names = definition.harness.output_files
    results = []
    for name, golden, shape in zip(names, goldens, case.output_shapes, strict=True):
        path = Path(out_dir) / name
        label = name.removesuffix(".bin")
        if not path.is_file():
            results.append(_missing(label, golden.size, standard, f"{name} was not written"))
            continue
        try:
            output = read_raw(path, case.dtype, shape)
        except ValueError as exc:
            results.append(_missing(label, golden.size, standard, str(exc)))
            continue
        results.append(compare_output(label, output, golden, standard))
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
