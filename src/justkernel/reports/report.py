"""The run report: the goal, the best candidates with their receipts and diffs against the
baseline, official results per point, the Judger's decisions and approvals, and the
cycles-over-time plot — each figure with the receipt or event it comes from.

Everything comes from the event log (and, for a diff, the team's git workspace when this lab
still has it); a figure the log does not hold is shown as missing, never as 0.
"""

from __future__ import annotations

import asyncio
import math
import subprocess
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from justkernel.core.events.agents import SourceChanged
from justkernel.core.reasons import Reason, reason_of
from justkernel.core.records.runs import provenance
from justkernel.lab import Lab
from justkernel.reports.document import (
    Banner,
    Code,
    Document,
    Figure,
    Mono,
    Para,
    Section,
    Table,
    to_html,
    to_markdown,
)
from justkernel.reports.fold import OUTSIDE, RunState, fold_into
from justkernel.reports.i18n import Lang, localise
from justkernel.reports.pipeline_report import pipeline_blocks
from justkernel.reports.svg import cycles_plot
from justkernel.reports.team_state import TeamState
from justkernel.store import Run
from justkernel.teams.git import GitError, git_dir_of, run_git

BEST_SHOWN = 3
DIFF_LIMIT = 20000
EDITABLE = ("op_host", "op_kernel")


async def fold_run(lab: Lab, run_id: str) -> RunState:
    run = await lab.runs.get(run_id)
    return await fold_into(lab.events, RunState(run_id), run.last_seq)


SIGNIFICANT = 6  # digits a measured float keeps: 76,772.6 µs, not 76772.63799999999


def fmt_num(value: int | float | None) -> str | None:
    """A figure for a reader: integers exact with thousands separators, floats to
    `SIGNIFICANT` digits (at most 6 decimals, trailing zeros dropped), "—" where missing."""
    if value is None or isinstance(value, bool):
        return None if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude < -6:
        return f"{value:.{SIGNIFICANT - 1}e}"
    decimals = min(6, max(0, SIGNIFICANT - 1 - magnitude))
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _team_label(state: RunState, team_id: str | None) -> str | None:
    """The team as the dashboard names it (its display name), with the internal id only
    when the name is missing or another team of the run has the same one."""
    if team_id is None:
        return None
    team = state.teams.get(team_id)
    name = team.display_name if team else None
    if not name:
        return team_id
    same = sum(1 for t in state.teams.values() if t.display_name == name)
    return f"{name} ({team_id})" if same > 1 else name


RULES_CHECKED = "rebuilt from the frozen bytes; source hash, receipt and tree policy checked"


def _review_text(review: dict[str, Any]) -> str:
    """One review for a reader: the verdict and reviewer, then the reasons, or for a rules
    review without reasons what the rules checked (never a label with nothing after it)."""
    reviewer = str(review.get("reviewer") or "—")
    text = f"{review.get('verdict') or '—'} by {reviewer}"
    reasons = [str(r) for r in review.get("reasons") or []]
    if reasons:
        text += ": " + ", ".join(reasons)
    elif reviewer.startswith("rules"):
        text += f" ({RULES_CHECKED})"
    notes = [str(n) for n in review.get("notes") or []]
    return text + (f" (notes: {', '.join(notes)})" if notes else "")


def _gain(team: TeamState) -> str | None:
    if team.best_cycles is None or not team.baseline_cycles:
        return None
    return f"{(1 - team.best_cycles / team.baseline_cycles) * 100:.1f} %"


def _git_diff(workspace: Path, base: str, head: str) -> str | None:
    """The committed change between two snapshots, read from the workspace's repository
    (beside the tree; inside it for an earlier session's workspace, which is only read)."""
    git_dir = git_dir_of(workspace)
    if not git_dir.is_dir():
        git_dir = workspace / ".git"
    if not git_dir.is_dir() or git_dir.is_symlink():
        return None
    try:
        out = run_git(
            git_dir,
            None,
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            f"{base}..{head}",
            "--",
            *EDITABLE,
        )
    except (OSError, subprocess.SubprocessError, GitError):
        return None
    out += "\n" if out else ""
    return out if len(out) <= DIFF_LIMIT else out[:DIFF_LIMIT] + "\n… (clipped)\n"


async def _recorded_diff(lab: Lab, run_id: str, team: str, upto: int) -> str | None:
    """The last source change the team logged before its best receipt (a fallback)."""
    last = None
    async for event in lab.events.iter_all(run_id):
        if event.seq > upto:
            break
        if event.kind == SourceChanged.KIND and event.team == team:
            try:
                last = SourceChanged.model_validate(event.payload).diff
            except ValidationError:  # a malformed one shows nothing
                last = None
    return last


def _error_figure(point: dict[str, Any]) -> Any:
    """The official site's ratio when it sent one, else the local judge's bucket."""
    ratio = point.get("error_ratio")
    return ratio if ratio is not None else point.get("error_bucket")


TARGETS = {
    "ascendc-cpu": "the Ascend C (msopgen) project, built and measured on a CPU (modelled cycles)",
    "cpu": "the C port of the operator (cachegrind cycles)",
    "cann": "the Ascend C (msopgen) project, built by the CANN toolkit",
}


def _target(meta: dict[str, Any]) -> Para:
    """The toolchain every receipt of the run comes from (a run from before targets: cpu)."""
    toolchain = str(meta.get("toolchain") or "cpu")
    what = TARGETS.get(toolchain)
    return Para("Target: ", Mono(toolchain), (f", {what}." if what else "."))


def _goal(run: Run, state: RunState) -> Section:
    meta = run.meta
    lines: list[str | Para] = [
        Para("Run ", Mono(run.id), f" ({run.name}), mode {run.mode}, created {run.created_at}."),
        _target(meta),
        "Goal: the fewest estimated cycles (sum over the performance cases) with every local "
        "case within the precision standard; officially, the lowest prof_sum on the hidden "
        "cases. Local and official results are kept apart: a local pass is not an official one.",
        f"Teams: {len(state.teams)}; model: {meta.get('model', '—')}; "
        f"task mode: {meta.get('mode', '—')}; events: {state.last_seq}.",
        f"Data: {provenance(run)}.",
    ]
    blocks: list[Any] = []
    if run.mode == "demo" or meta.get("simulated") is True:
        blocks.append(Banner("Simulated data: this run is a demo or a recording, not a contest."))
    if meta.get("offline") or any(t.offline for t in state.teams.values()):
        blocks.append(Banner("Offline model: teams were driven by the scripted playbook."))
    return Section("Goal", blocks + lines)


def _status_reason(team: TeamState) -> Reason | str | None:
    """Why the team is in its status: the reason's code (localised with the report), or
    words no code knows as they were written."""
    found = reason_of(team.status_reason_code, team.status_reason_params, team.status_reason)
    return found if found is not None else team.status_reason


OUTSIDE_STATUS = "outside agent (A2A)"


def _outside_action(team: TeamState) -> str:
    """What an outside agent's team last did over A2A, and when (it never takes a turn, so
    this, not a turn's status, says whether it is at work)."""
    last = team.last_outside
    if last is None:
        return "no action over A2A yet"
    ts = last.get("ts")
    when = f"{ts[:19].replace('T', ' ')} UTC" if isinstance(ts, str) and ts else "—"
    if last.get("action") == "candidate":
        return f"last: submitted a candidate ({last.get('status') or '—'}) at {when}"
    return f"last: sent a message to {last.get('to') or '—'} at {when}"


def _teams(state: RunState) -> Section:
    rows = [
        [
            _team_label(state, t.id),
            t.model_preset,
            ("offline" if t.offline else t.provider),
            OUTSIDE_STATUS if t.status == OUTSIDE else t.status,
            _outside_action(t) if t.status == OUTSIDE else _status_reason(t),
            fmt_num(t.baseline_cycles),
            fmt_num(t.best_cycles),
            _gain(t),
            (t.best or {}).get("receipt_id"),
            len(t.experiments),
            t.usage.calls,
            fmt_num(t.usage.total) + (" (est.)" if t.usage.estimated else "")
            if t.usage.total is not None
            else None,
        ]
        for t in sorted(state.teams.values(), key=lambda t: (t.registered_seq or 0, t.id))
    ]
    header = ["team", "model", "provider", "status", "why", "baseline cycles", "best cycles"]
    header += ["gain"]
    header += ["best receipt", "experiments", "model calls", "tokens"]
    return Section("Teams", [Table(header, rows)])


async def _best(lab: Lab, run: Run, state: RunState) -> Section:
    ranked = sorted(
        (t for t in state.teams.values() if t.best_cycles is not None),
        key=lambda t: t.best_cycles or 0,
    )[:BEST_SHOWN]
    section = Section("Best candidates (local receipts)")
    if not ranked:
        section.blocks.append("No team has a measured receipt yet.")
        return section
    source_run = str(run.meta.get("source_run_id") or run.id)
    for rank, team in enumerate(ranked, start=1):
        best = team.best or {}
        section.blocks.append(
            f"{rank}. {_team_label(state, team.id)}: {fmt_num(team.best_cycles)} estimated cycles "
            f"(baseline {fmt_num(team.baseline_cycles)}, gain {_gain(team) or '—'}), receipt "
            f"{best.get('receipt_id')}, event #{best.get('seq')}."
        )
        executor = best.get("executor") or {}
        packs = best.get("input_packs") or {}
        rows = [
            ["receipt", best.get("receipt_id")],
            ["source SHA-256", best.get("source_sha256")],
            ["tree SHA-256", best.get("tree_sha256")],
            ["commit", best.get("commit")],
            ["experiment", best.get("experiment")],
            ["cases passed", f"{best.get('cases_passed')} of {best.get('cases_run')}"],
            [
                "executor",
                f"{executor.get('host')}/{executor.get('worker')}/slot {executor.get('slot')}",
            ],
            ["toolchain", f"{executor.get('toolchain_id')} {executor.get('toolchain_version')}"],
            ["input packs", ", ".join(f"{k}={v}" for k, v in packs.items())],
        ]
        for case, cycles in (best.get("cycles_by_case") or {}).items():
            rows.append([f"cycles {case}", fmt_num(cycles)])
        section.blocks.append(Table(["field", "value"], rows))
        section.blocks += await pipeline_blocks(lab.blobs, best.get("blob"))
        workspace = lab.settings.workspaces_dir / source_run / team.id
        diff = None
        if team.baseline_commit and best.get("commit"):
            diff = await asyncio.to_thread(
                _git_diff, workspace, team.baseline_commit, str(best["commit"])
            )
        if diff is not None:
            section.blocks.append(
                f"Diff against the baseline ({team.baseline_commit} → "
                f"{best.get('commit')}), op_host/ and op_kernel/:"
            )
            section.blocks.append(Code(diff or "(no change)", "diff"))
            continue
        recorded = await _recorded_diff(lab, run.id, team.id, int(best.get("seq") or 0))
        section.blocks.append(
            Para(
                "The team's workspace is not in this lab; shown is the last source change the "
                "team logged before this receipt (",
                Mono("source.changed"),
                "), not the whole diff from the baseline.",
            )
        )
        section.blocks.append(Code(recorded or "(no source change was logged)", "diff"))
    return section


def _figure(value: Any) -> Any:
    """A number from the log formatted for reading; anything else (a bucket name) as is."""
    return fmt_num(value) if isinstance(value, int | float) else value


def _official(state: RunState) -> Section:
    section = Section("Official results per point")
    if not state.official:
        section.blocks.append("No official result yet.")
        return section
    rows = []
    for result in state.official:
        for point in result["points"] or [{}]:
            rows.append(
                [
                    result.get("submission_id"),
                    result.get("candidate_id"),
                    _team_label(state, result.get("team")),
                    (result.get("source_sha256") or "")[:16] or None,
                    point.get("id"),
                    {True: "pass", False: "fail"}.get(point.get("passed")),
                    _figure(_error_figure(point)),
                    _figure(point.get("time_us")),
                    _figure(point.get("best_time_us")),
                    result.get("status"),
                    f"#{result['seq']}",
                ]
            )
    header = ["submission", "candidate", "team", "source SHA-256", "point", "result"]
    header += ["error ratio", "time (µs)", "best time (µs)", "status", "event"]
    section.blocks.append(Table(header, rows))
    if state.champion:
        champ = state.champion
        section.blocks.append(
            f"Verified SOTA: submission {champ.get('submission_id')} of "
            f"{_team_label(state, champ.get('team')) or '—'}, "
            f"prof_sum {_figure(champ.get('prof_sum_us')) or '—'} µs (event #{champ.get('seq')})."
        )
    return section


def _judger(state: RunState) -> Section:
    section = Section("Judger decisions and approvals")
    rows = []
    for cand in state.judger_rows():
        frozen = cand.get("frozen") or {}
        reviews = "; ".join(_review_text(r) for r in cand["reviews"])
        nomination = cand.get("nomination") or {}
        approvals = "; ".join(f"{a.get('decision')} by {a.get('by')}" for a in cand["approvals"])
        submissions = ", ".join(str(s.get("submission_id")) for s in cand["submissions"])
        rows.append(
            [
                cand["candidate_id"],
                _team_label(state, cand.get("team")),
                fmt_num(frozen.get("cycles_sum")),
                reviews or None,
                ("awaiting approval" if nomination.get("awaiting_approval") else "nominated")
                if nomination
                else None,
                approvals or None,
                submissions or None,
                cand.get("status"),
            ]
        )
    if not rows:
        section.blocks.append("The Judger has not frozen a candidate in this run.")
        return section
    header = ["candidate", "team", "cycles", "review", "nomination", "approval", "submissions"]
    section.blocks.append(Table([*header, "status"], rows))
    return section


def _approvals(state: RunState) -> Section:
    """Every person's decision on a supervised team's tool calls (approval modes), and the
    cards still waiting."""
    section = Section("Approvals")
    rows = [
        [
            f"#{r['seq']}",
            _team_label(state, r["team"]) if r["team"] else None,
            r["what"],
            r["decision"],
            r["by"],
            r["reason"],
            r["ref"],
        ]
        for r in state.approvals.rows()
    ]
    if not rows:
        section.blocks.append("No tool call of this run asked a person for approval.")
        return section
    header = ["event", "team", "tool call", "decision", "by", "reason", "request or grant"]
    section.blocks.append(Table(header, rows))
    return section


async def build_document(lab: Lab, run_id: str, *, plot_file: str | None = None) -> Document:
    run = await lab.runs.get(run_id)
    state = await fold_run(lab, run_id)
    plot = Section(
        "Best cycles over time",
        [
            Figure(
                cycles_plot(state.series()),
                "Best measured estimated cycles per team (local receipts) over time",
                plot_file,
            )
        ],
    )
    return Document(
        f"JustKernel run report — {run.name}",
        [
            _goal(run, state),
            _teams(state),
            await _best(lab, run, state),
            plot,
            _official(state),
            _judger(state),
            _approvals(state),
        ],
    )


async def build_report(
    lab: Lab,
    run_id: str,
    fmt: Literal["md", "html"] | str,
    *,
    plot_file: str | None = None,
    lang: Lang = "en",
) -> str:
    doc = localise(await build_document(lab, run_id, plot_file=plot_file), lang)
    return to_html(doc) if fmt == "html" else to_markdown(doc)


def plot_svg(state: RunState) -> str:
    return cycles_plot(state.series())
