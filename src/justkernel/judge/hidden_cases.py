"""The local judge's hidden points: 15 cases drawn from a secret seed, unlike the local ones.

The seed is made once per judge folder and kept there (mode 0600); the cases drawn from it are
written next to it as `hidden_cases.toml` (table `[[hidden]]`, the format of the operator's
`cases.toml`) and read back on every start, so the points stay the same across restarts and
upgrades of this generator. Neither file ever leaves the judge folder; responses name the
points `h01`..`h15` only.

Each point follows one pattern (row / column / full / middle / two-axis reductions, operands
broadcast as rows, columns, scalars, lower ranks, 4-D) with extents drawn from the seed. No
extent above 1 equals one used by a local case, so a kernel tuned to the local shapes (a row of
1023, the c05 shape) meets none of them. Sizes stay small (about 2M elements over all 15, never
over 400k in one point) so one submission, callgrind on every point included, takes seconds.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from justkernel.judge.paths import write_private
from justkernel.operators import CaseSpec, OperatorDefinition, load_case_file, local_cases

HIDDEN_TABLE = "hidden"
POINTS = 15
SEED_FILE = "hidden_seed"
CASES_FILE = "hidden_cases.toml"
GENERATOR = "jk-hidden-points/1"
MAX_POINT_ELEMENTS = 400_000  # keeps one callgrind run of the naive baseline near a second

_HEADER = (
    "# Hidden points of the JustKernel local judge. SECRET: never copy this file into a team\n"
    "# workspace. Drawn by {generator} from the seed in {seed_file}; same format as the\n"
    "# operator's cases.toml (table [[hidden]]).\n\n"
)


class HiddenCasesError(RuntimeError):
    """The judge folder holds a hidden case file that is malformed or not 15 points."""


def point_ids() -> tuple[str, ...]:
    return tuple(f"h{i:02d}" for i in range(1, POINTS + 1))


class _Draw:
    """Extents from the seed's generator, never one a local case uses."""

    def __init__(self, rng: np.random.Generator, forbidden: set[int]) -> None:
        self.rng = rng
        self.forbidden = forbidden

    def __call__(self, low: int, high: int) -> int:
        for _ in range(1000):
            n = int(self.rng.integers(low, high + 1))
            if n not in self.forbidden:
                return n
        raise HiddenCasesError(f"no extent in [{low}, {high}] avoids the local ones")


Pattern = Callable[[_Draw], dict[str, Any]]


def _row(d: _Draw) -> dict[str, Any]:
    m, n = d(120, 250), d(500, 1000)
    return dict(shapes=((m, n), (m, n), (m, n)), dtype="float32", axes=[1])


def _row_keep_bcast_in0(d: _Draw) -> dict[str, Any]:
    m, n = d(60, 140), d(1200, 2400)
    return dict(shapes=((1, n), (m, n), (m, n)), dtype="float32", axes=[-1], keep=True, pos=True)


def _col_in2_lower_rank(d: _Draw) -> dict[str, Any]:
    m, n = d(1500, 3000), d(40, 100)
    return dict(shapes=((m, n), (m, n), (n,)), dtype="float32", axes=[0])


def _col_keep_in0_column(d: _Draw) -> dict[str, Any]:
    m, n = d(300, 700), d(150, 350)
    return dict(shapes=((m, 1), (m, n), (m, n)), dtype="float32", axes=[0], keep=True, pos=True)


def _full_positive(d: _Draw) -> dict[str, Any]:
    m, n = d(300, 560), d(400, 700)
    return dict(shapes=((m, n), (m, n), (m, n)), dtype="float32", axes=[], pos=True)


def _four_d_two_axes(d: _Draw) -> dict[str, Any]:
    a, b, c, e = d(3, 6), d(20, 40), d(9, 20), d(30, 70)
    s = (a, b, c, e)
    return dict(shapes=(s, s, s), dtype="float32", axes=[0, -2], keep=True)


def _in1_row_3d(d: _Draw) -> dict[str, Any]:
    a, b, n = d(4, 9), d(30, 60), d(300, 600)
    return dict(shapes=((a, b, n), (1, 1, n), (a, b, n)), dtype="float32", axes=[0, 1])


def _in1_column_row_keep(d: _Draw) -> dict[str, Any]:
    m, n = d(200, 400), d(300, 700)
    return dict(shapes=((m, n), (m, 1), (m, n)), dtype="float32", axes=[1], keep=True, pos=True)


def _scalars_full(d: _Draw) -> dict[str, Any]:
    m, n = d(200, 400), d(200, 400)
    return dict(shapes=((1,), (1,), (m, n)), dtype="float32", axes=[])


def _mid_axis_in0_bcast(d: _Draw) -> dict[str, Any]:
    a, b, c = d(20, 50), d(30, 80), d(40, 90)
    return dict(shapes=((a, 1, c), (a, b, c), (a, b, c)), dtype="float32", axes=[1])


def _row_f16_in2_row(d: _Draw) -> dict[str, Any]:
    m, n = d(150, 300), d(300, 600)
    return dict(shapes=((m, n), (m, n), (1, n)), dtype="float16", axes=[1])


def _col_keep_f16(d: _Draw) -> dict[str, Any]:
    m, n = d(800, 1600), d(60, 140)
    return dict(shapes=((m, n), (m, n), (m, n)), dtype="float16", axes=[0], keep=True, pos=True)


def _full_3d_f16(d: _Draw) -> dict[str, Any]:
    s = (d(4, 8), d(60, 120), d(150, 300))
    return dict(shapes=(s, s, s), dtype="float16", axes=[])


def _four_d_bcast_f16(d: _Draw) -> dict[str, Any]:
    a, b, c, e = d(3, 5), d(10, 20), d(10, 20), d(60, 160)
    return dict(
        shapes=((1, b, 1, e), (a, 1, c, 1), (a, b, c, e)), dtype="float16", axes=[1, 3], keep=True
    )


def _small_every_bcast_f16(d: _Draw) -> dict[str, Any]:
    p, q, r = d(3, 13), d(3, 13), d(3, 13)
    return dict(shapes=((p, 1, r), (1, q, 1), (q, r)), dtype="float16", axes=[0, -1])


PATTERNS: tuple[Pattern, ...] = (
    _row,
    _row_keep_bcast_in0,
    _col_in2_lower_rank,
    _col_keep_in0_column,
    _full_positive,
    _four_d_two_axes,
    _in1_row_3d,
    _in1_column_row_keep,
    _scalars_full,
    _mid_axis_in0_bcast,
    _row_f16_in2_row,
    _col_keep_f16,
    _full_3d_f16,
    _four_d_bcast_f16,
    _small_every_bcast_f16,
)


def local_extents(local: Sequence[CaseSpec]) -> set[int]:
    """Every extent above 1 in any local shape: hidden points use none of them."""
    return {n for case in local for shape in case.shapes for n in shape if n > 1}


def generate_hidden_cases(seed: int, local: Sequence[CaseSpec]) -> tuple[CaseSpec, ...]:
    """The 15 points of `seed`, deterministic for a given seed and local case set."""
    rng = np.random.default_rng(seed)
    draw = _Draw(rng, local_extents(local))
    cases = []
    for pid, pattern in zip(point_ids(), PATTERNS, strict=True):
        p = pattern(draw)
        case = CaseSpec(
            id=pid,
            input0=p["shapes"][0],
            input1=p["shapes"][1],
            input2=p["shapes"][2],
            dtype=p["dtype"],
            axes=tuple(p["axes"]),
            keep_dims=p.get("keep", False),
            distribution="positive" if p.get("pos") else "symmetric",
            seed=int(rng.integers(1 << 20, 1 << 31)),
            note=f"{GENERATOR}: {pattern.__name__.strip('_')}",
        )
        if case.elements > MAX_POINT_ELEMENTS:
            raise HiddenCasesError(f"{pid}: {case.elements} elements, over the budget")
        cases.append(case)
    return tuple(cases)


def _toml(value: Any) -> str:
    """A TOML value for the few types a case row holds (ints, bools, strings, int lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    return "[" + ", ".join(_toml(v) for v in value) + "]"


def _cases_toml(cases: Sequence[CaseSpec]) -> str:
    rows = []
    for case in cases:
        fields = case.model_dump(mode="json")
        rows.append(
            f"[[{HIDDEN_TABLE}]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in fields.items())
        )
    return "\n".join(rows)


def load_or_create_hidden_cases(
    folder: Path, definition: OperatorDefinition
) -> tuple[CaseSpec, ...]:
    """The judge's points: read from `folder`, or drawn from a new secret seed and stored."""
    cases_path = folder / CASES_FILE
    if cases_path.is_file():
        tables = load_case_file(cases_path)
        found = tables.get(HIDDEN_TABLE, ())
        if tuple(c.id for c in found) != point_ids():
            raise HiddenCasesError(f"{cases_path}: expected [[{HIDDEN_TABLE}]] h01..h{POINTS}")
        return found
    seed_path = folder / SEED_FILE
    if not seed_path.is_file():
        write_private(seed_path, f"{secrets.randbits(128):032x}\n")
    seed = int(seed_path.read_text().strip(), 16)
    cases = generate_hidden_cases(seed, local_cases(definition))
    header = _HEADER.format(generator=GENERATOR, seed_file=SEED_FILE)
    write_private(cases_path, header + _cases_toml(cases))
    if load_case_file(cases_path).get(HIDDEN_TABLE) != cases:
        raise HiddenCasesError(f"{cases_path}: does not read back as written")
    return cases
