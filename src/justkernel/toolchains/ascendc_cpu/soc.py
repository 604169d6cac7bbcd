"""The SoC parameter file of the ascendc-cpu cycle model: load, validate, turn into C++.

`resources/ascendc_cpu/soc/<name>.toml` holds every figure the model uses, each with the public
source it comes from (or an honest "assumption: ..."). A figure without a source is refused: a
number nobody can trace is not shown (AGENTS.md, evidence rules). The harness does not read TOML;
`write_params_header` generates `jk_soc_params.h` (a `jk_soc::params()` returning the engine's
`jk::SocParams`), and `soc_fingerprint` hashes that header, so any change to a figure, a source or
the generator gives a new toolchain version.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    create_model,
)

from justkernel.paths import resources_dir

DEFAULT_SOC = "ascend910b"
GENERATOR_VERSION = "jk-soc-header/1"
# The ops the vector-cost table must price, per dtype (H2's vector, cast and reduce headers).
VECTOR_OPS = (
    *("Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Abs", "Exp", "Ln", "Duplicate"),
    *("Cast", "ReduceSum", "WholeReduceSum", "BlockReduceSum", "ReduceMax", "ReduceMin"),
    "default",
)
DTYPE_BYTES = {"float32": 4, "float16": 2}

Source = Annotated[str, StringConstraints(strip_whitespace=True, min_length=8)]


class SocError(ValueError):
    """The SoC file is missing, not TOML, or a figure is absent, mistyped or unsourced."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PositiveInt(_Strict):
    value: Annotated[int, Field(gt=0, lt=2**32)]
    source: Source


class CountInt(_Strict):
    value: Annotated[int, Field(ge=0, lt=2**32)]
    source: Source


class PositiveFloat(_Strict):
    value: Annotated[float, Field(gt=0)]
    source: Source


class Figures(_Strict):
    ub_bytes: PositiveInt
    l1_bytes: PositiveInt
    l0a_bytes: PositiveInt
    l0b_bytes: PositiveInt
    l0c_bytes: PositiveInt
    block_bytes: PositiveInt
    repeat_bytes: PositiveInt
    max_repeat: PositiveInt
    vector_cores: PositiveInt
    cube_cores: PositiveInt
    clock_mhz: PositiveFloat
    mte2_latency: CountInt
    mte2_bytes_per_cycle: PositiveFloat
    mte3_latency: CountInt
    mte3_bytes_per_cycle: PositiveFloat
    scalar_issue: CountInt
    scalar_ub_access: CountInt
    flag_cycles: CountInt
    barrier_cycles: CountInt


class VectorCost(_Strict):
    startup: Annotated[int, Field(ge=0, lt=2**32)]
    per_repeat: Annotated[int, Field(ge=0, lt=2**32)]
    source: Source


def _op_table() -> type[BaseModel]:
    """One required field per op (so a missing op is named in the error)."""
    fields = {op: (VectorCost, ...) for op in VECTOR_OPS}
    return create_model("VectorTable", __base__=_Strict, **fields)  # type: ignore[call-overload]


VectorTable = _op_table()


class VectorCosts(_Strict):
    float32: VectorTable  # type: ignore[valid-type]
    float16: VectorTable  # type: ignore[valid-type]


class SocParams(_Strict):
    """A validated SoC parameter file."""

    schema_: Annotated[int, Field(alias="schema", ge=1, le=1)]
    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+$")]
    description: str = ""
    figures: Figures
    vector: VectorCosts

    def cost(self, op: str, dtype: str) -> VectorCost:
        return getattr(getattr(self.vector, dtype), op)


def soc_path(name: str = DEFAULT_SOC) -> Path:
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise SocError(f"bad SoC name {name!r}: lower-case letters, digits and _ only")
    return resources_dir() / "ascendc_cpu" / "soc" / f"{name}.toml"


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def load_soc(name: str = DEFAULT_SOC, path: Path | None = None) -> SocParams:
    """Read and validate a SoC file; SocError names the file and the offending key."""
    path = Path(path) if path is not None else soc_path(name)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SocError(f"{path}: no such SoC parameter file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SocError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SocError(f"{path}: invalid TOML: {exc}") from None
    try:
        soc = SocParams.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors())
        raise SocError(f"{path}: {problems}") from None
    if soc.name != path.stem:
        raise SocError(f"{path}: name: {soc.name!r} does not match the file name {path.stem!r}")
    return soc


def _cpp_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cpp_double(value: float) -> str:
    text = repr(float(value))
    return text if ("." in text or "e" in text) else text + ".0"


def params_header(soc: SocParams) -> str:
    """The C++ text of jk_soc_params.h (deterministic: same file, same bytes)."""
    f = soc.figures
    lines = [
        f"// Generated by justkernel.toolchains.ascendc_cpu.soc ({GENERATOR_VERSION}) from",
        f"// resources/ascendc_cpu/soc/{soc.name}.toml. Do not edit: edit the TOML (sources there)",
        "#pragma once",
        "#include <cstdint>",
        "#include <cstring>",
        '#include "jk_ascendc/engine.h"',
        '#include "jk_ascendc/host_platform.h"',
        "",
        "namespace jk_soc {",
        "struct OpCost {",
        "  const char* op;",
        "  uint32_t dtype_bytes;",
        "  uint32_t startup;",
        "  uint32_t per_repeat;",
        "};",
        "inline constexpr OpCost kVectorCosts[] = {",
    ]
    for dtype, nbytes in DTYPE_BYTES.items():
        for op in VECTOR_OPS:
            c = soc.cost(op, dtype)
            lines.append(f"    {{{_cpp_string(op)}, {nbytes}, {c.startup}, {c.per_repeat}}},")
    lines += [
        "};",
        "",
        "// The op's cost for its dtype; an op without its own row costs the dtype's `default`;",
        "// a dtype without a table (e.g. int32) uses the float32 rows.",
        "inline jk::VectorCost vector_cost(const char* op, uint32_t dtype_bytes) {",
        "  const uint32_t bytes = (dtype_bytes == 2) ? 2u : 4u;",
        "  const OpCost* fallback = nullptr;",
        "  for (const OpCost& c : kVectorCosts) {",
        "    if (c.dtype_bytes != bytes) continue;",
        "    if (op != nullptr && std::strcmp(c.op, op) == 0) return jk::VectorCost{c.startup, "
        "c.per_repeat};",
        '    if (std::strcmp(c.op, "default") == 0) fallback = &c;',
        "  }",
        "  return jk::VectorCost{fallback->startup, fallback->per_repeat};",
        "}",
        "",
        "inline jk::SocParams params() {",
        "  jk::SocParams p{};",
        f"  p.name = {_cpp_string(soc.name)};",
        f"  p.ub_bytes = {f.ub_bytes.value}u;",
        f"  p.block_bytes = {f.block_bytes.value}u;",
        f"  p.repeat_bytes = {f.repeat_bytes.value}u;",
        f"  p.max_repeat = {f.max_repeat.value}u;",
        f"  p.vector_cores = {f.vector_cores.value}u;",
        f"  p.clock_mhz = {_cpp_double(f.clock_mhz.value)};",
        f"  p.mte2_latency = {f.mte2_latency.value}u;",
        f"  p.mte2_bytes_per_cycle = {_cpp_double(f.mte2_bytes_per_cycle.value)};",
        f"  p.mte3_latency = {f.mte3_latency.value}u;",
        f"  p.mte3_bytes_per_cycle = {_cpp_double(f.mte3_bytes_per_cycle.value)};",
        f"  p.scalar_issue = {f.scalar_issue.value}u;",
        f"  p.scalar_ub_access = {f.scalar_ub_access.value}u;",
        f"  p.flag_cycles = {f.flag_cycles.value}u;",
        f"  p.barrier_cycles = {f.barrier_cycles.value}u;",
        "  p.vector_cost = &vector_cost;",
        "  return p;",
        "}",
        "",
        "// What PlatformAscendC reports to the tiling function.",
        "inline fe::PlatFormInfos platform() {",
        "  fe::PlatFormInfos p{};",
        f"  p.soc_name = {_cpp_string(soc.name)};",
        f"  p.core_num_aiv = {f.vector_cores.value}u;",
        f"  p.core_num_aic = {f.cube_cores.value}u;",
        f"  p.ub_bytes = {f.ub_bytes.value}u;",
        f"  p.l1_bytes = {f.l1_bytes.value}u;",
        f"  p.l0a_bytes = {f.l0a_bytes.value}u;",
        f"  p.l0b_bytes = {f.l0b_bytes.value}u;",
        f"  p.l0c_bytes = {f.l0c_bytes.value}u;",
        "  return p;",
        "}",
        "}  // namespace jk_soc",
        "",
    ]
    return "\n".join(lines)


def write_params_header(path: Path, name: str = DEFAULT_SOC) -> Path:
    """Write jk_soc_params.h for the harness build (the folder must exist)."""
    path = Path(path)
    path.write_text(params_header(load_soc(name)), encoding="utf-8")
    return path


def soc_fingerprint(name: str = DEFAULT_SOC) -> str:
    """SHA-256 of the generated header, which holds every figure the model uses; the sources
    are hashed too (they are the evidence behind the figures)."""
    soc = load_soc(name)
    digest = hashlib.sha256()
    digest.update(params_header(soc).encode())
    digest.update(soc.model_dump_json(by_alias=True).encode())
    return digest.hexdigest()
