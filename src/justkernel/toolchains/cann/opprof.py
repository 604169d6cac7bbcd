"""One `msprof op` run's output folder, read into the figures a receipt needs.

    <output>/OPPROF_{timestamp}_XXX/              one folder per run (we give each run its own
      simulator/                                  --output, so exactly one is expected)
        core0.veccore0/core0.veccore0_code_exe.csv, core0.veccore0_instr_exe.csv, trace.json
        core0.veccore1/...  core1.veccore0/...    one folder per core that ran (vec or cube)
        trace.json                                all cores in one chart
      OpBasicInfo.csv                             device mode (`msprof op` without simulator)

Figures of a simulated run (names as in `SimulatorReport.to_dict()`):

- `cycles` per core: the sum over the rows of its `*_code_exe.csv`, or of its
  `*_instr_exe.csv` when the kernel was built without -g (code_exe is then header only).
- `total_cycles` = max over cores. Cores run in parallel, so the slowest core bounds the
  kernel, like the duration does; `sum_cycles` (over cores) is kept as the total work.
- `running_time_us` = max over cores of the summed `running_time(us)` of code_exe.
- `duration_us` = span of the summary trace.json (max end - min start over all cores): the
  simulated kernel duration, the figure closest to the contest's Task Duration.
- `pipes`: per-pipe cycles summed over cores (instr_exe), per-core pipe busy time (trace).

A figure that cannot be computed for every core is None, never a partial number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from justkernel.toolchains.cann.parse import (
    CodeExe,
    InstrExe,
    OpBasicInfo,
    PipeTotals,
    parse_code_exe,
    parse_instr_exe,
    parse_op_basic_info,
    sum_pipes,
    task_duration_us,
)
from justkernel.toolchains.cann.tables import CannParseError
from justkernel.toolchains.cann.trace import CoreTrace, TraceSummary, parse_trace, span_of

CORE_DIR = re.compile(r"^core\d+(\.(veccore|cubecore)\d+)?$")


def find_opprof(output_dir: Path) -> Path:
    """The single OPPROF_* folder of one run (the folder itself if it is one)."""
    output_dir = Path(output_dir)
    if output_dir.name.startswith("OPPROF_") and output_dir.is_dir():
        return output_dir
    found = sorted(p for p in output_dir.glob("OPPROF_*") if p.is_dir() and not p.is_symlink())
    if not found:
        raise CannParseError(f"{output_dir}: no OPPROF_* folder (msprof wrote no result)")
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise CannParseError(f"{output_dir}: {len(found)} OPPROF_* folders, one expected: {names}")
    return found[0]


def _core_order(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name))


def _one(folder: Path, suffix: str) -> Path | None:
    """`<core>_<suffix>` in a core folder, or the only `*_<suffix>` there."""
    exact = folder / f"{folder.name}_{suffix}"
    if exact.is_file():
        return exact
    found = sorted(folder.glob(f"*_{suffix}"))
    if len(found) > 1:
        raise CannParseError(f"{folder}: several *_{suffix} files")
    return found[0] if found else None


@dataclass(frozen=True)
class CoreReport:
    core: str
    code: CodeExe | None
    instr: InstrExe | None
    trace: CoreTrace | None

    @property
    def cycles(self) -> int | None:
        """code_exe's sum when it has rows, else instr_exe's (built without -g)."""
        if self.code is not None and self.code.cycles is not None:
            return self.code.cycles
        return self.instr.cycles if self.instr is not None else None

    @property
    def cycles_source(self) -> str | None:
        if self.code is not None and self.code.cycles is not None:
            return "code_exe"
        return "instr_exe" if self.cycles is not None else None


def _r(value: float | None) -> float | None:
    """Traces carry 1e-6 us resolution; rounding hides float noise (3.8000000000000007)."""
    return None if value is None else round(value, 6)


def _all_or_none(values: list[Any]) -> list[Any] | None:
    return None if not values or any(v is None for v in values) else values


@dataclass(frozen=True)
class SimulatorReport:
    root: Path  # the OPPROF_* folder
    cores: tuple[CoreReport, ...]
    trace: TraceSummary | None  # simulator/trace.json (all cores)

    @property
    def total_cycles(self) -> int | None:
        values = _all_or_none([c.cycles for c in self.cores])
        return None if values is None else max(values)

    @property
    def sum_cycles(self) -> int | None:
        values = _all_or_none([c.cycles for c in self.cores])
        return None if values is None else sum(values)

    @property
    def slowest_core(self) -> str | None:
        if self.total_cycles is None:
            return None
        return max(self.cores, key=lambda c: c.cycles or 0).core

    @property
    def running_time_us(self) -> float | None:
        values = _all_or_none([c.code.running_time_us if c.code else None for c in self.cores])
        return None if values is None else max(values)

    @property
    def duration_us(self) -> float | None:
        if self.trace is not None and self.trace.cores:
            return self.trace.span_us
        traces = _all_or_none([c.trace for c in self.cores])
        return None if traces is None else span_of(traces)

    @property
    def pipes(self) -> dict[str, PipeTotals] | None:
        instr = _all_or_none([c.instr for c in self.cores])
        return None if instr is None else sum_pipes(i.pipes for i in instr)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON for the receipt's summary log: every figure and where it came from."""
        return {
            "opprof": self.root.name,
            "total_cycles": self.total_cycles,
            "sum_cycles": self.sum_cycles,
            "slowest_core": self.slowest_core,
            "running_time_us": _r(self.running_time_us),
            "duration_us": _r(self.duration_us),
            "pipes": {
                k: {**vars(v), "running_time_us": _r(v.running_time_us)}
                for k, v in (self.pipes or {}).items()
            },
            "cores": [
                {
                    "core": c.core,
                    "cycles": c.cycles,
                    "cycles_source": c.cycles_source,
                    "running_time_us": _r(c.code.running_time_us) if c.code else None,
                    "span_us": _r(c.trace.span_us) if c.trace else None,
                    "pipe_busy_us": (
                        {p: _r(v) for p, v in c.trace.pipe_busy_us.items()} if c.trace else None
                    ),
                    "pipe_cycles": (
                        {p: t.cycles for p, t in c.instr.pipes.items()} if c.instr else None
                    ),
                }
                for c in self.cores
            ],
        }


def _core_trace(folder: Path) -> CoreTrace | None:
    path = folder / "trace.json"
    if not path.is_file():
        return None
    cores = parse_trace(path).cores
    if folder.name in cores:
        return cores[folder.name]
    if len(cores) == 1:  # numeric pid without a process_name: the file is this core's
        return next(iter(cores.values()))
    return None


def parse_simulator(output: Path, code_filter: str | None = None) -> SimulatorReport:
    """Read `<output>/OPPROF_*/simulator/` (or an OPPROF folder given directly)."""
    root = find_opprof(output)
    sim = root / "simulator"
    if not sim.is_dir():
        raise CannParseError(f"{root}: no simulator/ folder (not a simulator run?)")
    folders = sorted(
        (p for p in sim.iterdir() if p.is_dir() and CORE_DIR.match(p.name)),
        key=lambda p: _core_order(p.name),
    )
    if not folders:
        raise CannParseError(f"{sim}: no core*.veccore* / core*.cubecore* folder")
    cores = []
    for folder in folders:
        code_path, instr_path = _one(folder, "code_exe.csv"), _one(folder, "instr_exe.csv")
        if code_path is None and instr_path is None:
            raise CannParseError(f"{folder}: no *_code_exe.csv or *_instr_exe.csv")
        cores.append(
            CoreReport(
                core=folder.name,
                code=parse_code_exe(code_path, code_filter) if code_path else None,
                instr=parse_instr_exe(instr_path) if instr_path else None,
                trace=_core_trace(folder),
            )
        )
    summary = sim / "trace.json"
    trace = parse_trace(summary) if summary.is_file() else None
    return SimulatorReport(root, tuple(cores), trace)


@dataclass(frozen=True)
class DeviceReport:
    root: Path
    rows: tuple[OpBasicInfo, ...]

    def duration_us(self, op_name: str | None = None) -> float:
        return task_duration_us(self.rows, op_name)

    def to_dict(self) -> dict[str, Any]:
        return {"opprof": self.root.name, "rows": [vars(r) for r in self.rows]}


def parse_device(output: Path) -> DeviceReport:
    """Every OpBasicInfo.csv row of one on-device `msprof op` run."""
    root = find_opprof(output)
    files = sorted(root.rglob("OpBasicInfo.csv"))
    if not files:
        raise CannParseError(f"{root}: no OpBasicInfo.csv (not a device run?)")
    rows = tuple(r for f in files for r in parse_op_basic_info(f))
    return DeviceReport(root, rows)
