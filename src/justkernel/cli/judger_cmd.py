"""`justkernel judger show|set|pending|approve|reject`: the Judger's settings and the human
decisions on its nominations, from a terminal. They act on the database and the settings
file every lab process shares, so a running `justkernel run` or server picks them up on the
Judger's next pass."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from justkernel.cli.common import console, fail, lab_context, run_async, settings_or_exit
from justkernel.judger.settings import (
    JudgerSettings,
    JudgerSettingsError,
    JudgerSettingsFile,
    model_problem,
)

judger_app = typer.Typer(help="The Judger's settings and human approval of its nominations.")


def _file() -> JudgerSettingsFile:
    return JudgerSettingsFile(settings_or_exit().resolved_data_dir)


def _load(file: JudgerSettingsFile) -> JudgerSettings:
    try:
        return file.load()
    except JudgerSettingsError as exc:
        fail(str(exc))


def _print(settings: JudgerSettings, file: JudgerSettingsFile) -> None:
    table = Table(title=f"Judger settings ({file.path})")
    table.add_column("setting")
    table.add_column("value")
    for key, value in settings.model_dump().items():
        shown = "no local cap" if key == "quota_per_day" and value is None else str(value)
        table.add_row(key, shown)
    console.print(table)


@judger_app.command("show")
def show() -> None:
    """Print the Judger's settings."""
    file = _file()
    _print(_load(file), file)


@judger_app.command("set")
def set_settings(
    model: Annotated[str | None, typer.Option(help='"rules" or a model preset.')] = None,
    quota: Annotated[int | None, typer.Option(help="Submissions per day (max 50).")] = None,
    no_quota_cap: Annotated[
        bool,
        typer.Option(
            "--no-quota-cap",
            help="No local daily cap (the judge's own 429 answers still hold the Judger back).",
        ),
    ] = False,
    margin: Annotated[float | None, typer.Option(help="Beat the bar by this fraction.")] = None,
    strategy: Annotated[str | None, typer.Option(help="verified or official-driven.")] = None,
    diagnosis_per_day: Annotated[
        int | None, typer.Option(help="Official-driven: unverified submissions per day.")
    ] = None,
    human_approval: Annotated[
        bool | None, typer.Option(help="Nominations wait for approve/reject.")
    ] = None,
) -> None:
    """Change some settings; the others keep their values."""
    from pydantic import ValidationError

    from justkernel.settings.models import load_model_presets

    file = _file()
    changes: dict[str, Any] = {
        "model": model,
        "quota_per_day": quota,
        "margin": margin,
        "strategy": strategy,
        "diagnosis_per_day": diagnosis_per_day,
        "human_approval": human_approval,
    }
    values = {**_load(file).model_dump(), **{k: v for k, v in changes.items() if v is not None}}
    if no_quota_cap:
        if quota is not None:
            fail("--quota and --no-quota-cap contradict each other: give one")
        values["quota_per_day"] = None  # the daily limit left empty
    try:
        settings = JudgerSettings.model_validate(values)
    except ValidationError as exc:
        fail("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()))
    if model is not None:
        problem = model_problem(model, load_model_presets(settings_or_exit().models_local_file))
        if problem:
            fail(problem)
    _print(file.save(settings), file)


@judger_app.command("pending")
def pending(run_id: Annotated[str, typer.Argument(metavar="RUN")]) -> None:
    """Nominations of a run that wait for a human decision."""

    async def go() -> list[Any]:
        async with lab_context(settings_or_exit()) as lab:
            await lab.runs.get(run_id)
            from justkernel.core.statuses import CandidateStatus

            return await lab.candidates.list(run_id, status=CandidateStatus.AWAITING_APPROVAL)

    table = Table(title=f"awaiting approval in {run_id}")
    for column in ("candidate", "team", "est. cycles", "local precision", "source SHA-256"):
        table.add_column(column)
    for cand in _guard(go):
        cycles = f"{cand.cycles_sum:,}" if cand.cycles_sum is not None else "—"
        passed = "passed" if cand.local_passed else "not fully verified"
        table.add_row(cand.id, cand.team_id, cycles, passed, cand.source_sha256[:16])
    console.print(table)


def _guard(factory: Any) -> Any:
    from justkernel.judger.approvals import DecisionRefused
    from justkernel.store.runs import UnknownRun

    try:
        return run_async(factory)
    except UnknownRun as exc:
        fail(f"no run with id {exc}")
    except DecisionRefused as exc:
        fail(str(exc))


def _decide(run_id: str, candidate_id: str, decision: str) -> None:
    from justkernel.judger.approvals import decide

    async def go() -> dict[str, Any]:
        async with lab_context(settings_or_exit()) as lab:
            run = await lab.runs.get(run_id)
            if run.read_only:
                fail(f"run {run_id} is a read-only {run.mode}")
            return await decide(lab, lab.candidates, run_id, candidate_id, decision, "cli")

    event = _guard(go)
    console.print(f"{candidate_id}: {decision} (event {event['seq']} in {run_id})")


@judger_app.command("approve")
def approve(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    candidate_id: Annotated[str, typer.Argument(metavar="CANDIDATE")],
) -> None:
    """Approve a nomination: the Judger submits it on its next pass (quota permitting)."""
    _decide(run_id, candidate_id, "approved")


@judger_app.command("reject")
def reject(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    candidate_id: Annotated[str, typer.Argument(metavar="CANDIDATE")],
) -> None:
    """Reject a nomination: it is never submitted."""
    _decide(run_id, candidate_id, "rejected")


def register(app: typer.Typer) -> None:
    app.add_typer(judger_app, name="judger")
