"""`justkernel evaluate PATH`: judge one project folder locally and print its receipt.

`--cases all` (the default) is a full job: every local case, then the cycle simulation of the
perf cases. A comma-separated list of case ids is a probe on those cases only. Exit codes:
0 the candidate passed (measured / probe_passed), 1 it did not, 2 a bad path or case id,
3 the lab could not evaluate (no sandbox, unreachable data folder, ...).

`--toolchain ascendc-cpu` evaluates the operator's Ascend C (msopgen) project instead of the C
port: the receipt then shows the cycle model's per-pipe table (busy cycles and utilisation
of MTE2, V, MTE3 and S on the slowest core, the bound pipe) and, for `api_misuse`, the check
and the call site.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table

from justkernel.cli.common import console, err_console, fail, run_async, settings_or_exit
from justkernel.core.receipts import CaseResult, CycleResult, Receipt, Status

MISSING = "—"
# What `evaluate` runs here (the cann toolchain needs a CANN host and its template: `worker`)
LOCAL_TOOLCHAINS = ("cpu", "ascendc-cpu")


def _num(value: float | int | None, fmt: str = "{:.3g}") -> str:
    return MISSING if value is None else fmt.format(value)


def _status(status: Status) -> str:
    color = "green" if status.passed else "red"
    return f"[bold {color}]{status.value}[/]"


def _summary(r: Receipt) -> Table:
    t = Table(title=f"receipt {r.job_key[:16]}", show_header=False, title_justify="left")
    t.add_column("field", style="bold")
    t.add_column("value", overflow="fold")
    ex = r.executor
    rows = [
        ("status", _status(r.status)),
        ("detail", escape(r.detail) or MISSING),
        ("job", f"{r.kind.value} · {r.operator} · team {escape(r.team or MISSING)}"),
        ("source sha256", r.source_sha256),
        ("input packs", ", ".join(f"{k} {v}" for k, v in sorted(r.input_packs.items()))),
        ("cache hit", "yes (stored receipt, nothing ran)" if r.cache_hit else "no"),
        ("executor", f"{ex.host} slot {_num(ex.slot, '{}')} · {ex.worker} · {ex.cpu_model}"),
        (
            "toolchain",
            " · ".join(_known(f"{ex.toolchain_id} {ex.toolchain_version}", ex.gcc, ex.valgrind)),
        ),
        ("sandbox", ex.sandbox or MISSING),
        ("finished", r.finished_at.isoformat(timespec="seconds") if r.finished_at else MISSING),
    ]
    if r.misuse is not None:
        m = r.misuse
        rows.insert(2, ("misuse", escape(f"{m.check} at {m.site()}: {m.message}")))
    for key, value in rows:
        t.add_row(key, value)
    return t


def _known(*values: str | None) -> list[str]:
    return [v for v in values if v]


def _max(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _worst_output(case: CaseResult) -> tuple[str, str, str, str]:
    """error ratio, max abs, max rel and first failing indices over a case's outputs."""
    if not case.outputs:
        return MISSING, MISSING, MISSING, MISSING
    ratio = _max(o.error_ratio for o in case.outputs)
    abs_err = _max(o.max_abs_error for o in case.outputs)
    rel_err = _max(o.max_rel_error for o in case.outputs)
    firsts = "; ".join(f"{o.name} {o.first_failures}" for o in case.outputs if o.first_failures)
    return _num(ratio), _num(abs_err), _num(rel_err), firsts or MISSING


def _result(case: CaseResult) -> str:
    if case.passed:
        return "[green]pass[/]"
    if case.passed is None:
        return f"[dim]{case.outcome.value}[/]"
    return f"[red]{case.outcome.value}[/]"


def _cases(r: Receipt) -> Table:
    t = Table(title="functional cases", title_justify="left")
    t.add_column("case", no_wrap=True)
    t.add_column("result", min_width=6)
    for col in ("err ratio", "max abs", "max rel", "s"):
        t.add_column(col, justify="right")
    for case in r.cases:
        ratio, abs_err, rel_err, firsts = _worst_output(case)
        extra = ""
        if not case.passed:
            extra = f" {escape(case.detail)}" if case.detail else ""
            extra += f" first failures: {escape(firsts)}" if firsts != MISSING else ""
        t.add_row(
            case.case_id,
            _result(case) + extra,
            ratio,
            abs_err,
            rel_err,
            _num(case.wall_seconds, "{:.2f}"),
        )
    return t


def _cycles(r: Receipt) -> Table:
    t = Table(title="cycle simulation (callgrind, kernel only)", title_justify="left")
    for col in ("perf case", "est. cycles", "Ir", "L1 miss", "LL miss", "check"):
        text = col in ("perf case", "check")
        t.add_column(col, justify="left" if text else "right", no_wrap=col != "check")
    for c in r.cycles:
        k = c.counters
        l1 = None if k is None else k.I1mr + k.D1mr + k.D1mw
        ll = None if k is None else k.ILmr + k.DLmr + k.DLmw
        t.add_row(
            c.case_id,
            _num(c.est_cycles, "{:,}"),
            _num(None if k is None else k.Ir, "{:,}"),
            _num(l1, "{:,}"),
            _num(ll, "{:,}"),
            _result(c.check),
        )
    t.add_row("[bold]sum[/]", f"[bold]{_num(r.total_est_cycles, '{:,}')}[/]", "", "", "", "")
    return t


PIPES = ("MTE2", "V", "MTE3", "S")


def _short(value: int) -> str:
    """3,596,882 -> 3.60M: the pipe columns must fit a terminal."""
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return str(value)


def _pipe_cell(c: CycleResult, pipe: str) -> str:
    figures = c.pipeline.pipes.get(pipe) if c.pipeline else None
    if figures is None:
        return MISSING
    util = "" if figures.utilisation is None else f" {100 * figures.utilisation:.0f}%"
    return f"{_short(figures.busy)}{util}"


def _pipeline(r: Receipt) -> Table:
    """The ascendc-cpu cycle model, one column per perf case: total cycles (the slowest
    core's makespan), the bound pipe, the cores, and per pipe its busy cycles and utilisation
    on the slowest core. A figure the receipt lacks is —."""
    socs = sorted({c.pipeline.soc for c in r.cycles if c.pipeline})
    t = Table(
        title=f"cycle model (ascendc-cpu, {', '.join(socs) or MISSING})",
        title_justify="left",
        caption="pipe rows: busy cycles and utilisation of the slowest core",
    )
    t.add_column("", style="bold", no_wrap=True)
    for c in r.cycles:
        t.add_column(c.case_id, justify="right", no_wrap=True)
    pipelines = [c.pipeline for c in r.cycles]
    t.add_row("cycles", *(_num(c.est_cycles, "{:,}") for c in r.cycles))
    t.add_row("bound pipe", *((p.bound_pipe or MISSING) if p else MISSING for p in pipelines))
    t.add_row("cores", *(_num(p.block_dim if p else None, "{}") for p in pipelines))
    for pipe in PIPES:
        t.add_row(pipe, *(_pipe_cell(c, pipe) for c in r.cycles))
    t.add_row("check", *(_result(c.check) for c in r.cycles))
    t.add_row("sum", f"[bold]{_num(r.total_est_cycles, '{:,}')}[/]", *[""] * (len(r.cycles) - 1))
    return t


def _durations(r: Receipt) -> Table:
    t = Table(title="stage seconds", title_justify="left")
    stages = r.durations.model_dump()
    for name in stages:
        t.add_column(name, justify="right")
    t.add_row(*(_num(v, "{:.2f}") for v in stages.values()))
    return t


def render_receipt(r: Receipt) -> Group:
    """The receipt as rich tables; a missing figure is shown as —, never as 0."""
    parts: list[Table | str] = [_summary(r)]
    if r.compile is not None and not r.compile.ok:
        lines = r.compile.problems + r.compile.diagnostics_head
        parts.append("[bold]compile / static check:[/]\n" + escape("\n".join(lines[:30])))
    if r.cases:
        parts.append(_cases(r))
    if any(c.pipeline is not None for c in r.cycles) or r.executor.toolchain_id == "ascendc-cpu":
        if r.cycles:
            parts.append(_pipeline(r))
    elif r.cycles:
        parts.append(_cycles(r))
    parts.append(_durations(r))
    return Group(*parts)


async def _evaluate(
    path: Path,
    case_ids: list[str] | None,
    team: str,
    slots: int,
    out: Console,
    toolchain_id: str = "cpu",
) -> Receipt:
    from justkernel.operators import load_operator
    from justkernel.store.blobs import BlobStore
    from justkernel.toolchains.registry import TOOLCHAINS
    from justkernel.workers.evaluator import Evaluator
    from justkernel.workers.pool import LocalPool
    from justkernel.workers.worker_entry import open_dir

    settings = settings_or_exit()
    cache = open_dir(settings.toolchains_dir / toolchain_id)  # per user, as the lab's
    toolchain = TOOLCHAINS[toolchain_id](load_operator(), cache)
    pool = LocalPool(slots=1)
    evaluator = Evaluator(
        settings, pool, toolchain, BlobStore(settings.blobs_dir), sim_parallelism=slots
    )
    kind = "full" if case_ids is None else "probe"
    try:
        evaluator.select_cases(kind, case_ids)  # type: ignore[arg-type]
        with out.status("starting", spinner="dots") as status:
            return await evaluator.evaluate(
                path,
                team=team,
                kind=kind,
                case_ids=case_ids,
                progress=lambda stage: status.update(f"[bold]{stage}[/] · {escape(str(path))}"),
            )
    finally:
        await pool.close()


def evaluate_command(
    path: Annotated[Path, typer.Argument(help="The operator project folder to evaluate.")],
    cases: Annotated[
        str,
        typer.Option(
            "--cases",
            help="'all': every local case plus the cycle simulation (a full job); "
            "or comma-separated case ids: a probe on those cases only.",
        ),
    ] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="Print the receipt as JSON.")] = False,
    team: Annotated[str, typer.Option("--team", help="Team the job is charged to.")] = "local",
    slots: Annotated[
        int, typer.Option("--slots", min=1, max=8, help="Run the perf simulations N at a time.")
    ] = 1,
    toolchain: Annotated[
        str,
        typer.Option(
            "--toolchain",
            help="cpu (the C port, callgrind) or ascendc-cpu (the Ascend C msopgen project, "
            "modelled AI Core cycles).",
        ),
    ] = "cpu",
) -> None:
    """Compile, check and measure one candidate in the sandbox; print its receipt."""
    from justkernel.operators import OperatorDefinitionError
    from justkernel.toolchains import CandidateError, ToolchainError
    from justkernel.toolchains.sandbox import SandboxError
    from justkernel.workers.evaluator import CaseSelectionError

    if toolchain not in LOCAL_TOOLCHAINS:
        fail(f"--toolchain: unknown {toolchain!r} (known: {', '.join(LOCAL_TOOLCHAINS)})")
    case_ids = None if cases.strip() == "all" else [c for c in cases.split(",") if c.strip()]
    if case_ids is not None:
        case_ids = [c.strip() for c in case_ids]
        if not case_ids:
            fail("--cases needs 'all' or at least one case id")
    try:
        receipt = run_async(
            lambda: _evaluate(
                path, case_ids, team, slots, err_console if as_json else console, toolchain
            )
        )
    except (CandidateError, CaseSelectionError) as exc:
        fail(str(exc))
    except (ToolchainError, SandboxError, OperatorDefinitionError) as exc:
        fail(f"could not evaluate: {exc}", code=3)
    except OSError as exc:
        fail(f"cannot read the project: {exc}")
    if as_json:
        typer.echo(json.dumps(receipt.model_dump(mode="json"), indent=1))
    else:
        console.print(render_receipt(receipt))
    raise typer.Exit(0 if receipt.status.passed else 1)


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate_command)
