"""Test cases: shapes, attributes and a seed, from which the inputs are generated deterministically.

Cases are data (a TOML file next to operator.toml) so the local judge can keep its hidden cases in
another file of the same format, outside every team workspace.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from justkernel.operators.definition import (
    Dtype,
    OperatorDefinition,
    OperatorDefinitionError,
    format_validation_error,
    load_operator,
    parse_toml,
    read_bytes,
)

MAX_RANK = 8
Distribution = Literal["symmetric", "positive"]
Shape = Annotated[tuple[Annotated[int, Field(ge=1)], ...], Field(max_length=MAX_RANK)]

# Value ranges per distribution: uniform [low, high) in float64, then cast to the case dtype.
DISTRIBUTIONS: dict[str, tuple[float, float]] = {
    "symmetric": (-1.0, 1.0),
    "positive": (0.0, 1.0),
}


class CaseSpec(BaseModel):
    """One case: the three input shapes, dtype, attributes and how to draw the values."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$", max_length=64)
    input0: Shape
    input1: Shape
    input2: Shape
    dtype: Dtype
    axes: tuple[int, ...] = ()
    keep_dims: bool = False
    distribution: Distribution
    seed: int = Field(ge=0)
    note: str = ""

    @model_validator(mode="after")
    def _valid_operator_call(self) -> CaseSpec:
        try:
            np.broadcast_shapes(self.input0, self.input1)
        except ValueError:
            raise ValueError(
                f"input0 {self.input0} and input1 {self.input1} do not broadcast"
            ) from None
        try:
            product = np.broadcast_shapes(self.input1, self.input2)
        except ValueError:
            raise ValueError(
                f"input1 {self.input1} and input2 {self.input2} do not broadcast"
            ) from None
        normalized = [a + len(product) if a < 0 else a for a in self.axes]
        if any(not 0 <= a < len(product) for a in normalized):
            raise ValueError(f"axes {list(self.axes)} out of range for product rank {len(product)}")
        if len(set(normalized)) != len(normalized):
            raise ValueError(f"axes {list(self.axes)} repeat an axis")
        return self

    @property
    def shapes(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        return (self.input0, self.input1, self.input2)

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    @property
    def output0_shape(self) -> tuple[int, ...]:
        return tuple(np.broadcast_shapes(self.input0, self.input1))

    @property
    def product_shape(self) -> tuple[int, ...]:
        """Shape of input1 * input2, the space `axes` index into."""
        return tuple(np.broadcast_shapes(self.input1, self.input2))

    @property
    def reduce_axes(self) -> tuple[int, ...]:
        """Normalized, sorted axes; empty `axes` means every axis."""
        rank = len(self.product_shape)
        if not self.axes:
            return tuple(range(rank))
        return tuple(sorted(a + rank if a < 0 else a for a in self.axes))

    @property
    def output1_shape(self) -> tuple[int, ...]:
        reduced = set(self.reduce_axes)
        shape = self.product_shape
        if self.keep_dims:
            return tuple(1 if d in reduced else n for d, n in enumerate(shape))
        return tuple(n for d, n in enumerate(shape) if d not in reduced)

    @property
    def output_shapes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return (self.output0_shape, self.output1_shape)

    @property
    def elements(self) -> int:
        """Size of the larger iteration space, a rough measure of the work."""
        return max(int(np.prod(self.output0_shape)), int(np.prod(self.product_shape)))

    def canonical(self) -> dict[str, Any]:
        """Everything that determines the inputs and goldens (the note does not), for hashing."""
        return {
            "id": self.id,
            "inputs": [list(s) for s in self.shapes],
            "dtype": self.dtype,
            "axes": list(self.axes),
            "keep_dims": self.keep_dims,
            "distribution": self.distribution,
            "seed": self.seed,
        }


def generate_inputs(case: CaseSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """input0, input1, input2 drawn in that order from default_rng(seed), cast to the dtype."""
    rng = np.random.default_rng(case.seed)
    low, high = DISTRIBUTIONS[case.distribution]
    drawn = [np.asarray(rng.uniform(low, high, size=shape)) for shape in case.shapes]
    return tuple(a.astype(case.numpy_dtype) for a in drawn)  # type: ignore[return-value]


def load_case_file(path: Path) -> dict[str, tuple[CaseSpec, ...]]:
    """All case tables of a case file (e.g. `local`, `perf`), ids unique across the file.

    Every evaluation asks for the operator's cases several times (case ids, packs, job key),
    so the parsed tables are kept per file content: the file is read each time (a rewritten
    file is never answered from the old one), parsed and validated only when its bytes are
    new. The specs are frozen; the dict is the caller's own copy."""
    path = Path(path)
    return dict(_parse_case_file(path, read_bytes(path)))


@lru_cache(maxsize=16)
def _parse_case_file(path: Path, content: bytes) -> dict[str, tuple[CaseSpec, ...]]:
    data = parse_toml(path, content)
    tables: dict[str, tuple[CaseSpec, ...]] = {}
    seen: dict[str, str] = {}
    for table, rows in data.items():
        if not isinstance(rows, list):
            raise OperatorDefinitionError(
                f"{path}: {table}: expected an array of tables [[{table}]]"
            )
        specs = []
        for index, row in enumerate(rows):
            where = f"{table}[{index}]"
            try:
                spec = CaseSpec.model_validate(row)
            except ValidationError as exc:
                raise OperatorDefinitionError(format_validation_error(path, exc, where)) from None
            if spec.id in seen:
                raise OperatorDefinitionError(
                    f"{path}: {where}.id: {spec.id!r} already used in {seen[spec.id]}"
                )
            seen[spec.id] = where
            specs.append(spec)
        tables[table] = tuple(specs)
    return tables


def local_cases(definition: OperatorDefinition | None = None) -> tuple[CaseSpec, ...]:
    """The functional cases every candidate must pass locally, in their fixed order."""
    definition = definition or load_operator()
    tables = load_case_file(definition.cases_file)
    table = definition.cases.local
    if table not in tables:
        raise OperatorDefinitionError(f"{definition.cases_file}: no [[{table}]] cases")
    return tables[table]


def perf_cases(definition: OperatorDefinition | None = None) -> tuple[CaseSpec, ...]:
    """The representative cycle-simulation cases named by `cases.perf` in operator.toml."""
    definition = definition or load_operator()
    by_id = {c.id: c for specs in load_case_file(definition.cases_file).values() for c in specs}
    missing = [i for i in definition.cases.perf if i not in by_id]
    if missing:
        raise OperatorDefinitionError(f"{definition.cases_file}: perf cases {missing} not defined")
    return tuple(by_id[i] for i in definition.cases.perf)
