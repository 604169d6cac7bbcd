"""The team's lab tools: plan, compile, simulate, read results, list and propose cases.

Tools are closures over one team's `TeamContext`; they reach the world only through it (the
workspace, the evaluator, the notebook, the event log). Results are short JSON the model can
act on; full receipts go to `scratch/receipts/` in the workspace and can be paged with
`read_simulation_results(section=...)`: what a model reads of a receipt is
`agents.receipt_view`'s (both toolchains), an ascendc-cpu trace's paged summary
`agents.pipeline_pages`'.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from pydantic import BaseModel, Field, create_model

from justkernel.agents.pipeline_pages import PipelinePages, PipelineUnavailable
from justkernel.agents.receipt_view import profile, receipt_summary
from justkernel.core.events import EventPayload
from justkernel.core.events.agents import CasesProposed, ExperimentPlanned, ExperimentReceipt
from justkernel.core.pipeline_trace import TRACE_SUFFIX
from justkernel.core.receipts import Receipt
from justkernel.events import EventLog
from justkernel.operators import CaseSpec, local_cases, perf_cases
from justkernel.operators.project_files import is_untouched_template
from justkernel.store import BlobStore
from justkernel.store.experiments import ExperimentBook
from justkernel.teams.proposed_cases import ProposalError, ProposedCases
from justkernel.teams.workspace import SCRATCH_DIR, TeamWorkspace

__all__ = ["TeamContext", "build_tools", "receipt_summary"]

PAGE_CHARS = 4000
SMOKE_CASE = "c15_small_bcast_f32"  # 35 elements: proves the build links and runs
KNOWN_IDS_HINT = "use the local case ids the schema lists (list_local_cases describes them)"
BASELINE_NOTE = (
    "this source is the operator's untouched template: your baseline to beat, not a candidate "
    "(nothing was frozen; the Judger never submits the template). Change op_kernel/ or "
    "op_host/ and measure again to make one."
)


def plan_args(local_ids: tuple[str, ...]) -> type[BaseModel]:
    """record_experiment_plan's arguments as the model sees them: each one described, the
    case ids enumerated (the local cases; a plan names only those)."""
    case_id = Literal[local_ids]  # type: ignore[valid-type]
    return create_model(
        "RecordExperimentPlan",
        failure_evidence=(
            str,
            Field(description="What the last receipt showed (or why there is none yet)."),
        ),
        hypothesis=(
            str,
            Field(description="ONE hypothesis: why the change will be faster, or correct."),
        ),
        change=(str, Field(description="The concrete code change, in which files.")),
        validation_criterion=(
            str,
            Field(description="The result that confirms the hypothesis (or refutes it)."),
        ),
        case_ids=(
            list[case_id],  # type: ignore[valid-type]
            Field(
                description="The local cases that matter most for this change: the quick "
                "probe runs them."
            ),
        ),
        tool_call_id=(Annotated[str, InjectedToolCallId], ...),
    )


def simulate_args(local_ids: tuple[str, ...]) -> type[BaseModel]:
    """simulate_kernel's arguments: probe case ids enumerated (the local ones), and any id
    the team proposed accepted too."""
    case_id = Literal[local_ids]  # type: ignore[valid-type]
    return create_model(
        "SimulateKernel",
        mode=(
            Literal["probe", "full"],
            Field(
                "full",
                description="probe: only case_ids, functional; full: every local "
                "case and the cycle simulation (closes the plan).",
            ),
        ),
        case_ids=(
            list[case_id | str] | None,  # type: ignore[valid-type]
            Field(
                None,
                description="probe only: local case ids, or ids you proposed with "
                "propose_local_cases; default the plan's case_ids.",
            ),
        ),
        tool_call_id=(Annotated[str, InjectedToolCallId], ...),
    )


def compile_status(ok: bool, receipt: Receipt) -> str:
    """compile_kernel's status: what the build says, not the smoke probe's `probe_passed`."""
    if not ok:
        return str(receipt.status)
    return "compiled" if receipt.status.passed else "compiled_smoke_failed"


class EvaluatorLike(Protocol):
    async def evaluate(
        self,
        source_dir: Any,
        *,
        team: str,
        kind: str = "full",
        case_ids: list[str] | None = None,
        priority: Any = None,
    ) -> Receipt: ...


@dataclass
class TeamContext:
    run_id: str
    team_id: str
    workspace: TeamWorkspace
    evaluator: EvaluatorLike
    experiments: ExperimentBook
    events: EventLog
    blobs: BlobStore
    on_progress: Callable[[str], Awaitable[None]] | None = None
    # called after every full simulation of a source other than the untouched template: the
    # scheduler freezes it for the Judger (measured ones; under the official-driven strategy
    # also those that failed precision)
    on_full_receipt: Callable[[Receipt, dict[str, bytes], str], Awaitable[str | None]] | None = None
    proposed: ProposedCases | None = None  # the team's own probe cases
    # an evaluator that also knows the proposed cases (for probes that name them)
    extended_evaluator: Callable[[tuple[CaseSpec, ...]], EvaluatorLike] | None = None
    last_receipt_key: str | None = None
    best_cycles: int | None = None
    receipts: dict[str, Receipt] = field(default_factory=dict)

    async def progress(self, what: str) -> None:
        if self.on_progress is not None:
            await self.on_progress(what)

    async def evaluate(
        self, *, kind: str, case_ids: list[str] | None, evaluator: EvaluatorLike | None = None
    ) -> tuple[Receipt, dict[str, bytes]]:
        """Evaluate the candidate part of the workspace (not its notes, skills or git); also
        return its editable files exactly as evaluated, for freezing."""
        with tempfile.TemporaryDirectory(prefix=f"{self.team_id}-") as tmp:
            candidate = self.workspace.export_candidate(Path(tmp) / "candidate")
            policy = self.workspace.operator.paths
            files = {
                p.relative_to(candidate).as_posix(): p.read_bytes()
                for p in sorted(candidate.rglob("*"))
                if p.is_file() and policy.access(p.relative_to(candidate).as_posix()) == "editable"
            }
            receipt = await (evaluator or self.evaluator).evaluate(
                candidate, team=self.team_id, kind=kind, case_ids=case_ids
            )
            return receipt, files

    async def emit(self, payload: EventPayload, *, once_per: str | None = None) -> None:
        """Append an event for this team; `once_per` (e.g. a tool call id) makes it
        idempotent, so work redone after a crash does not log twice."""
        key = f"{self.team_id}:{payload.KIND}:{once_per}" if once_per else None
        await self.events.append(self.run_id, payload, team=self.team_id, dedup_key=key)


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def build_tools(ctx: TeamContext) -> list[BaseTool]:
    known_cases = {c.id: c for c in local_cases()}
    timelines = PipelinePages(ctx.blobs.get)

    @tool(args_schema=plan_args(tuple(known_cases)))
    async def record_experiment_plan(
        failure_evidence: str,
        hypothesis: str,
        change: str,
        validation_criterion: str,
        case_ids: list[str],
        tool_call_id: str,
    ) -> str:
        """Record the plan of your next experiment. A simulation needs an open plan; the full
        simulation that follows closes it, so every experiment starts with a new plan."""
        unknown = [c for c in case_ids if c not in known_cases]
        if unknown:
            return _json({"error": f"unknown case ids {unknown}", "next": KNOWN_IDS_HINT})
        plan = {
            "failure_evidence": failure_evidence,
            "hypothesis": hypothesis,
            "change": change,
            "validation_criterion": validation_criterion,
            "case_ids": case_ids,
        }
        experiment, new = await ctx.experiments.record_plan(
            ctx.run_id, ctx.team_id, plan, tool_call_id
        )
        if new:
            await ctx.emit(
                ExperimentPlanned(experiment=experiment.number, **plan),
                once_per=tool_call_id,
            )
        return _json({"experiment": experiment.number, "status": "recorded"})

    @tool
    async def compile_kernel() -> str:
        """Compile the current op_host/ and op_kernel/ sources with the fixed flags, run the
        static checks, and smoke-run the smallest local case. `ok` says it compiled and passed
        the static checks; `status` is compiled (and the smoke case passed), compiled_smoke_failed
        (`smoke` says how), compile_failed or static_check_failed, with the first diagnostics."""
        receipt, _files = await ctx.evaluate(kind="probe", case_ids=[SMOKE_CASE])
        report = receipt.compile
        ok = report is not None and report.ok and receipt.status != "static_check_failed"
        answer: dict[str, Any] = {
            "ok": ok,
            "status": compile_status(ok, receipt),
            "smoke_case": SMOKE_CASE,
            "smoke": ("passed" if receipt.status.passed else str(receipt.status)) if ok else None,
            "failed_step": report.failed_step if report else None,
            "diagnostics": report.diagnostics_head[:20] if report else [],
            "problems": report.problems[:10] if report else [],
        }
        if not ok:
            answer["next"] = (
                "fix the first diagnostic or problem and compile again; "
                "read_simulation_results(section='log') has the whole log"
            )
        elif not receipt.status.passed:
            answer["next"] = (
                "the smoke case failed: simulate_kernel(mode='probe') on your plan's cases "
                "says which cases fail and how"
            )
        return _json(answer)

    @tool(args_schema=simulate_args(tuple(known_cases)))
    async def simulate_kernel(
        tool_call_id: str,
        mode: Literal["probe", "full"] = "full",
        case_ids: list[str] | None = None,
    ) -> str:
        """Run the current source under the open experiment plan. mode="probe": only
        `case_ids` (a functional check, quick). mode="full": every local case plus the cycle
        simulation of the performance cases; this closes the plan with its receipt, and a
        passing source is frozen as a candidate (`frozen_candidate`; the untouched template is
        answered as your `baseline` instead)."""
        plan = await ctx.experiments.open_plan(ctx.run_id, ctx.team_id)
        if plan is None and mode == "full":  # re-run after a crash: the plan it closed
            plan = await ctx.experiments.closed_by_call(ctx.run_id, ctx.team_id, tool_call_id)
        if plan is None:
            return _json(
                {
                    "error": "no open experiment plan",
                    "next": "call record_experiment_plan first: every experiment needs a new "
                    "plan, and a full simulation closes the plan it ran under",
                }
            )
        evaluator = None
        if mode == "probe":
            ids = list(case_ids or plan.plan.get("case_ids") or [])
            proposed = {c.id: c for c in (ctx.proposed.cases() if ctx.proposed else ())}
            unknown = [c for c in ids if c not in known_cases and c not in proposed]
            if not ids or unknown:
                return _json(
                    {
                        "error": f"a probe needs known case ids; unknown: {unknown or ids}",
                        "next": KNOWN_IDS_HINT + " (or ids you proposed)",
                    }
                )
            if any(c in proposed for c in ids) and ctx.extended_evaluator is not None:
                evaluator = ctx.extended_evaluator(tuple(proposed.values()))
        else:
            ids = None
        snapshot = ctx.workspace.commit(f"experiment {plan.number}: {mode} simulation")
        receipt, files = await ctx.evaluate(kind=mode, case_ids=ids, evaluator=evaluator)
        ctx.receipts[receipt.job_key] = receipt
        ctx.last_receipt_key = receipt.job_key
        _save_receipt(ctx, receipt)
        blob = ctx.blobs.put(receipt.model_dump_json(indent=1).encode())
        cycles = receipt.total_est_cycles
        if receipt.status == "measured" and cycles is not None:
            ctx.best_cycles = cycles if ctx.best_cycles is None else min(ctx.best_cycles, cycles)
        summary = receipt_summary(receipt, ctx.best_cycles)
        if mode == "full" and plan.status == "planned":
            await ctx.experiments.close(
                plan,
                status=str(receipt.status),
                commit=snapshot.commit,
                tree_sha256=snapshot.tree_sha256,
                receipt_key=receipt.job_key,
                cycles_sum=receipt.total_est_cycles,
                closed_by=tool_call_id,
            )
        await ctx.emit(
            ExperimentReceipt(
                experiment=plan.number,
                commit=snapshot.commit,
                tree_sha256=snapshot.tree_sha256,
                receipt=summary,
                input_packs=receipt.input_packs,
                executor=receipt.executor.model_dump(mode="json"),
                blobs=[blob],
            ),
            once_per=tool_call_id,
        )
        await ctx.progress("experiment")
        if mode == "full" and is_untouched_template(files, ctx.workspace.operator):
            # the Judger's review refuses the template (it would spend an official submission
            # on nothing new), so it is never handed off: not frozen, not shared as a best
            summary["baseline"] = BASELINE_NOTE
        elif mode == "full" and ctx.on_full_receipt is not None:
            frozen = await ctx.on_full_receipt(receipt, files, snapshot.commit)
            if frozen is not None:
                summary["frozen_candidate"] = frozen
        return _json(summary)

    @tool
    async def read_simulation_results(
        receipt_id: Annotated[
            str | None, Field(description="a receipt_id a simulation returned; default the latest")
        ] = None,
        section: Annotated[
            Literal["summary", "log", "profile", "pipeline"], Field(description="what to read")
        ] = "summary",
        offset: Annotated[int, Field(description='section="log": the character to start at')] = 0,
        case_id: Annotated[
            str | None,
            Field(description='section="pipeline": a perf case id; default the costliest'),
        ] = None,
        page: Annotated[int, Field(description='section="pipeline": the page, 1-based')] = 1,
    ) -> str:
        """Read a receipt (the latest by default).

        section="summary": status, failing cases, cycles per perf case; for an ascendc-cpu
        receipt also per perf case the bound pipe and the per-pipe table (busy cycles,
        utilisation, instructions), and for api_misuse the check, site and message.
        "log": compiler and run logs, paged by `offset` (characters).
        "profile": the simulator's figures per perf case: callgrind counters (cpu toolchain)
        or the pipe model's record (ascendc-cpu: every pipe, each core's makespan).
        "pipeline" (ascendc-cpu only): one perf case's timeline (`case_id`, default the
        costliest) per core and pipe: busy and utilisation, longest idle gaps and which other
        pipe was busy during them, the costliest instructions with their source line; cores
        slowest first, paged by `page` (1-based, `next_page` says if there is more).
        """
        key = receipt_id or ctx.last_receipt_key
        receipt = ctx.receipts.get(key or "") or _load_receipt(ctx, key)
        if receipt is None:
            return _json({"error": "no receipt yet: run simulate_kernel first"})
        if section == "summary":
            return _json(receipt_summary(receipt, ctx.best_cycles))
        if section == "profile":
            return _json(profile(receipt))
        if section == "pipeline":
            try:
                answer = await asyncio.to_thread(timelines.page, receipt, case_id, page)
            except PipelineUnavailable as exc:
                return _json({"receipt_id": receipt.job_key, "error": str(exc)})
            return _json(answer)
        text = _log_text(ctx, receipt)
        page_text = text[offset : offset + PAGE_CHARS]
        following = offset + PAGE_CHARS if offset + PAGE_CHARS < len(text) else None
        return _json({"receipt_id": receipt.job_key, "log": page_text, "next_offset": following})

    @tool
    async def list_local_cases() -> str:
        """The local functional cases and the performance cases: ids, shapes, dtype, axes."""

        def describe(case: Any) -> dict[str, Any]:
            return {
                "id": case.id,
                "dtype": case.dtype,
                "input_shapes": [list(s) for s in case.shapes],
                "axes": list(case.axes),
                "keep_dims": case.keep_dims,
            }

        proposed = ctx.proposed.load() if ctx.proposed else []
        return _json(
            {
                "local": [describe(c) for c in local_cases()],
                "performance": [describe(c) for c in perf_cases()],
                "proposed": [
                    {
                        **describe(CaseSpec.model_validate(p["case"])),
                        "input_hash": p["input_hash"],
                        "status": p["status"],
                    }
                    for p in proposed
                ],
            }
        )

    @tool
    async def propose_local_cases(
        cases: Annotated[
            list[dict[str, Any]], Field(description="up to 10 cases, each as the description says")
        ],
        rationale: Annotated[str, Field(description="why these shapes matter for your kernel")],
    ) -> str:
        """Add probe cases of your own (up to 10): each {"id", "input0", "input1", "input2"
        (shapes), "dtype" (float32|float16), "axes", "keep_dims", "distribution"
        (symmetric|positive)}. They are unconfirmed hypotheses for probes only: the 15 local
        cases stay the standard and are never replaced."""
        if ctx.proposed is None:
            return _json({"error": "proposing cases is not available in this lab"})
        try:
            added = ctx.proposed.propose(cases, rationale)
        except ProposalError as exc:
            return _json({"error": str(exc)})
        ids = [a["case"]["id"] for a in added]
        await ctx.emit(
            CasesProposed(
                cases=[a["case"] for a in added],
                rationale=rationale,
                input_hashes=[a["input_hash"] for a in added],
            )
        )
        return _json(
            {
                "added": [{"id": a["case"]["id"], "input_hash": a["input_hash"]} for a in added],
                "status": "unconfirmed hypothesis",
                "use": f"simulate_kernel(mode='probe', case_ids={ids})",
            }
        )

    return [
        record_experiment_plan,
        compile_kernel,
        simulate_kernel,
        read_simulation_results,
        list_local_cases,
        propose_local_cases,
    ]


def _receipt_path(ctx: TeamContext, key: str) -> Any:
    return ctx.workspace.root / SCRATCH_DIR / "receipts" / f"{key}.json"


def _save_receipt(ctx: TeamContext, receipt: Receipt) -> None:
    path = _receipt_path(ctx, receipt.job_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(receipt.model_dump_json(indent=1))


def _load_receipt(ctx: TeamContext, key: str | None) -> Receipt | None:
    if not key or not key.isalnum():
        return None
    path = _receipt_path(ctx, key)
    if not path.is_file():
        return None
    return Receipt.model_validate_json(path.read_text())


def _log_text(ctx: TeamContext, receipt: Receipt) -> str:
    parts = []
    if receipt.compile is not None:
        parts.append("## compile\n" + "\n".join(receipt.compile.diagnostics_head))
    for ref in receipt.all_logs():
        if ref.name.endswith(TRACE_SUFFIX):  # binary; section="pipeline" reads it
            parts.append(f"## {ref.name}\n(a pipeline trace: read it with section='pipeline')")
            continue
        try:
            data = ctx.blobs.get(ref.sha256).decode("utf-8", "replace")
        except (OSError, ValueError):
            data = "(log not available on this host)"
        parts.append(f"## {ref.name}\n{data}")
    return "\n\n".join(parts) or "(no logs)"
