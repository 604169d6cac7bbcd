"""What a model reads of a receipt: the summary after every simulation and the "profile"
section, for receipts of both toolchains.

A `cpu` receipt's perf cases carry callgrind counters (`cycles[].counters`); an `ascendc-cpu`
receipt's carry the pipe model's figures (`cycles[].pipeline`: total, bound pipe, per-pipe
busy cycles, utilisation and instructions of the slowest core). The summary holds, per perf
case, the figures a next step is decided on and no more: the whole per-pipe table is four rows.
A misuse record (status `api_misuse`) is shown with its check, site and message, so the model
can look the check up in the rule-review skill.
"""

from __future__ import annotations

from typing import Any

from justkernel.core.pipeline_trace import pipe_rank
from justkernel.core.receipts import CaseResult, Misuse, Pipeline, Receipt


def _misuse(misuse: Misuse, case_id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "check": misuse.check,
        "site": misuse.site(),
        "message": misuse.message,
        "block": misuse.block,
    }
    if case_id is not None:
        out["case_id"] = case_id
    return out


def _failed(case: CaseResult) -> dict[str, Any]:
    worst = max(case.outputs, key=lambda o: o.error_ratio or 0.0, default=None)
    out: dict[str, Any] = {
        "case_id": case.case_id,
        "outcome": str(case.outcome),
        "detail": case.detail,
        "output": worst.name if worst else None,
        "error_ratio": worst.error_ratio if worst else None,
        "max_abs_error": worst.max_abs_error if worst else None,
        "first_failures": worst.first_failures[:5] if worst else [],
    }
    if case.misuse is not None:
        out["misuse"] = _misuse(case.misuse)
    return out


def pipe_table(pipeline: Pipeline) -> dict[str, dict[str, Any]]:
    """Per pipe (chart order): busy cycles, utilisation (of the slowest core's makespan) and
    instructions issued on it."""
    return {
        name: {
            "busy": fig.busy,
            "utilisation": None if fig.utilisation is None else round(fig.utilisation, 3),
            "instructions": fig.instructions,
        }
        for name, fig in sorted(pipeline.pipes.items(), key=lambda item: pipe_rank(item[0]))
    }


def pipeline_figures(receipt: Receipt) -> dict[str, dict[str, Any]]:
    """Per perf case with pipe-model figures: total, bound pipe, cores used, the pipe table."""
    return {
        c.case_id: {
            "total_cycles": c.pipeline.total,
            "bound_pipe": c.pipeline.bound_pipe,
            "block_dim": c.pipeline.block_dim,
            "pipes": pipe_table(c.pipeline),
        }
        for c in receipt.cycles
        if c.pipeline is not None
    }


def receipt_summary(receipt: Receipt, best: int | None) -> dict[str, Any]:
    """What the agent needs to decide its next step, and no more."""
    checks = receipt.cases + [c.check for c in receipt.cycles]
    failed = [_failed(case) for case in checks if case.passed is False]
    summary: dict[str, Any] = {
        "receipt_id": receipt.job_key,
        "mode": str(receipt.kind),
        "status": str(receipt.status),
        "detail": receipt.detail,
        "cache_hit": receipt.cache_hit,
        "source_sha256": receipt.source_sha256,
        "cases_run": len([c for c in receipt.cases if c.passed is not None]),
        "cases_passed": len([c for c in receipt.cases if c.passed]),
        "failed_cases": failed[:10],
        "cycles": {c.case_id: c.est_cycles for c in receipt.cycles},
        "total_est_cycles": receipt.total_est_cycles,
        "best_total_est_cycles_so_far": best,
    }
    if receipt.misuse is not None:
        first = next((c.case_id for c in checks if c.misuse == receipt.misuse), None)
        summary["misuse"] = _misuse(receipt.misuse, first)
        summary["misuse_help"] = "the rule-review skill maps each check to its fix"
    figures = pipeline_figures(receipt)
    if figures:
        summary["pipeline"] = figures
        summary["pipeline_help"] = (
            "per-core, per-pipe timeline: read_simulation_results(section='pipeline', case_id=...)"
        )
    if receipt.compile is not None and not receipt.compile.ok:
        summary["compile"] = {
            "failed_step": receipt.compile.failed_step,
            "diagnostics": receipt.compile.diagnostics_head[:20],
            "problems": receipt.compile.problems[:10],
        }
    return summary


def profile(receipt: Receipt) -> dict[str, Any]:
    """Per perf case, the simulator's own figures: callgrind counters (cpu) or the pipe model's
    whole record (ascendc-cpu: every pipe, each core's makespan, whether the trace was cut)."""
    cases = []
    for c in receipt.cycles:
        entry: dict[str, Any] = {"case_id": c.case_id, "est_cycles": c.est_cycles}
        if c.counters is not None:
            entry["counters"] = c.counters.model_dump()
        if c.pipeline is not None:
            p = c.pipeline
            entry["pipeline"] = {
                "model": p.model,
                "soc": p.soc,
                "total_cycles": p.total,
                "bound_pipe": p.bound_pipe,
                "block_dim": p.block_dim,
                "pipes": pipe_table(p),
                "core_makespans": {str(core.block): core.makespan for core in p.cores},
                "trace_truncated": p.trace_truncated,
            }
        if c.counters is None and c.pipeline is None:
            entry["counters"] = None
        cases.append(entry)
    return {
        "receipt_id": receipt.job_key,
        "toolchain": receipt.executor.toolchain_id,
        "profile": cases,
    }
