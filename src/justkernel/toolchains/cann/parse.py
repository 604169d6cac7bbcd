"""Parsers for the per-core simulator CSVs and the on-device OpBasicInfo.csv of `msprof op`.

Formats (CANN msprof op / msopprof docs, see docs/simulation-and-judging.md "The CANN toolchain"):

- `core*.veccore*_code_exe.csv`: one row per source line: `code` ("path:line"), `call_count`,
  `cycles` (cycles of the line's instructions on that core), `running_time(us)`. Without `-g`
  the simulator writes the header only: then the file has no figure (None, never 0).
- `core*.veccore*_instr_exe.csv`: one row per instruction (PC): `instr`, `addr`, `pipe`,
  `call_count`, `cycles`, `running_time(us)`, `detail`. Written with or without `-g`.
- `OpBasicInfo.csv` (device): `Op Name`, `Op Type`, `Task Duration(us)`, `Block Dim`,
  `Mix Block Dim` (N/A when not a mix kernel), `Device Id`, `Pid`, `Current Freq`, `Rated Freq`.

Cycles of one core are the sum over its rows. Pipes run in parallel, so that sum is the work
the core's pipes did, an upper bound of its busy cycles; `cann.trace` gives the wall span.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from justkernel.toolchains.cann.tables import CannParseError, Row, read_table

CODE_COLUMNS = ("code", "call_count", "cycles", "running_time(us)")
INSTR_COLUMNS = ("instr", "pipe", "call_count", "cycles")
OPBASIC_COLUMNS = ("Op Name", "Task Duration(us)")


@dataclass(frozen=True)
class CodeExe:
    """One core's `*_code_exe.csv`: totals over the rows kept (None when there are none)."""

    path: Path
    rows: int
    call_count: int | None
    cycles: int | None
    running_time_us: float | None


def _keep(row: Row, code_filter: str | None) -> bool:
    return code_filter is None or code_filter in row.text("code")


def parse_code_exe(path: Path, code_filter: str | None = None) -> CodeExe:
    """Sum `cycles`, `call_count` and `running_time(us)` over the rows whose `code` contains
    `code_filter` (all rows when None). A header-only file (built without -g) has no figure."""
    rows = [r for r in read_table(path, CODE_COLUMNS) if _keep(r, code_filter)]
    if not rows:
        return CodeExe(Path(path), 0, None, None, None)
    return CodeExe(
        path=Path(path),
        rows=len(rows),
        call_count=sum(r.integer("call_count") for r in rows),
        cycles=sum(r.integer("cycles") for r in rows),
        running_time_us=sum(r.number("running_time(us)") for r in rows),
    )


@dataclass(frozen=True)
class PipeTotals:
    """What one pipe did on one core (or summed over cores)."""

    cycles: int
    call_count: int
    running_time_us: float | None  # None when the file has no running_time(us) column
    instructions: int  # distinct instruction rows


@dataclass(frozen=True)
class InstrExe:
    """One core's `*_instr_exe.csv`: per-pipe totals and the sum over all rows."""

    path: Path
    pipes: dict[str, PipeTotals] = field(default_factory=dict)

    @property
    def cycles(self) -> int | None:
        return sum(p.cycles for p in self.pipes.values()) if self.pipes else None


def parse_instr_exe(path: Path) -> InstrExe:
    """Group the instruction rows by `pipe` (name upper-cased: the trace uses upper case)."""
    rows = read_table(path, INSTR_COLUMNS)
    acc: dict[str, list[Row]] = {}
    for r in rows:
        pipe = r.text("pipe").upper()
        if not pipe:
            raise CannParseError(f"{path}: line {r.line}: 'pipe' is empty")
        acc.setdefault(pipe, []).append(r)
    has_time = bool(rows) and rows[0].has("running_time(us)")
    pipes = {
        pipe: PipeTotals(
            cycles=sum(r.integer("cycles") for r in group),
            call_count=sum(r.integer("call_count") for r in group),
            running_time_us=(
                sum(r.optional_number("running_time(us)") or 0.0 for r in group)
                if has_time
                else None
            ),
            instructions=len(group),
        )
        for pipe, group in sorted(acc.items())
    }
    return InstrExe(Path(path), pipes)


def sum_pipes(parts: Iterable[Mapping[str, PipeTotals]]) -> dict[str, PipeTotals]:
    """Per-pipe totals summed over cores."""
    out: dict[str, PipeTotals] = {}
    for part in parts:
        for pipe, t in part.items():
            prev = out.get(pipe)
            if prev is None:
                out[pipe] = t
                continue
            time = (
                None
                if prev.running_time_us is None or t.running_time_us is None
                else prev.running_time_us + t.running_time_us
            )
            out[pipe] = PipeTotals(
                prev.cycles + t.cycles,
                prev.call_count + t.call_count,
                time,
                prev.instructions + t.instructions,
            )
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class OpBasicInfo:
    """One row of OpBasicInfo.csv (one launched kernel on the device)."""

    op_name: str
    op_type: str | None
    task_duration_us: float
    block_dim: int | None
    mix_block_dim: int | None  # None for "N/A" (not a mix kernel)
    device_id: int | None
    pid: int | None
    current_freq: float | None  # MHz
    rated_freq: float | None


def parse_op_basic_info(path: Path) -> list[OpBasicInfo]:
    """Every row of OpBasicInfo.csv; a file without a data row is an error (nothing ran)."""
    rows = read_table(path, OPBASIC_COLUMNS)
    if not rows:
        raise CannParseError(f"{path}: no operator row")
    out = []
    for r in rows:
        name = r.text("Op Name")
        if not name:
            raise CannParseError(f"{path}: line {r.line}: 'Op Name' is empty")
        duration = r.number("Task Duration(us)")
        if duration < 0:
            raise CannParseError(f"{path}: line {r.line}: negative Task Duration {duration}")
        out.append(
            OpBasicInfo(
                op_name=name,
                op_type=r.text("Op Type") or None,
                task_duration_us=duration,
                block_dim=r.optional_integer("Block Dim"),
                mix_block_dim=r.optional_integer("Mix Block Dim"),
                device_id=r.optional_integer("Device Id"),
                pid=r.optional_integer("Pid"),
                current_freq=r.optional_number("Current Freq"),
                rated_freq=r.optional_number("Rated Freq"),
            )
        )
    return out


def task_duration_us(rows: Iterable[OpBasicInfo], op_name: str | None = None) -> float:
    """The duration of one case: the Task Duration of the row whose Op Name contains
    `op_name` (every row when None), summed when the case launched several kernels."""
    chosen = [r for r in rows if op_name is None or op_name in r.op_name]
    if not chosen:
        raise CannParseError(f"no OpBasicInfo row for operator {op_name!r}")
    return sum(r.task_duration_us for r in chosen)


def prof_sum(durations: Mapping[str, float | None]) -> float | None:
    """The contest metric: the sum of per-case durations (us). None when any case has no
    duration: a partial sum would look like a (better) score."""
    if not durations or any(d is None for d in durations.values()):
        return None
    return sum(d for d in durations.values() if d is not None)
