"""A run records its target and keeps it: a `cpu` run resumed under an `ascendc-cpu` default
stays a `cpu` run (its scheduler, evaluator, workspaces and Judger), and `justkernel run
--toolchain` chooses the target of a new run and cannot change a resumed one's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from justkernel.app import LabRuntime, RunSession, TeamPlan, open_runtime
from justkernel.capabilities import Capability, target_readiness
from justkernel.cli.main import app
from justkernel.reports.report import build_report
from justkernel.settings.config import Settings


def _settings(shared_lab_dir: Path, tmp_path: Path) -> Settings:
    return Settings(data_dir=shared_lab_dir / "data", config_dir=tmp_path / "config")


async def test_a_cpu_run_resumed_under_an_ascendc_default_stays_cpu(
    monkeypatch: pytest.MonkeyPatch, shared_lab_dir: Path, tmp_path: Path
) -> None:
    settings = _settings(shared_lab_dir, tmp_path)  # JUSTKERNEL_TOOLCHAIN=cpu (the suite's pin)
    async with open_runtime(settings, slots=1) as runtime:
        started = await RunSession.start(
            runtime, "a cpu run", meta={}, config=None, teams=[TeamPlan("offline")]
        )
    assert started.run.meta["toolchain"] == "cpu"
    monkeypatch.delenv("JUSTKERNEL_TOOLCHAIN")
    later = _settings(shared_lab_dir, tmp_path)
    assert later.toolchain == "ascendc-cpu"
    async with open_runtime(later, slots=1) as runtime:
        assert runtime.evaluator.toolchain.id == "ascendc-cpu"  # the lab's default now
        session = await RunSession.reopen(runtime, started.run_id, None)
        assert session.toolchain == "cpu"
        scheduler = session.scheduler
        assert scheduler.toolchain_id == "cpu"
        assert scheduler.evaluator.toolchain.id == "cpu"  # type: ignore[attr-defined]
        assert scheduler.operator.project_dir == runtime.target("cpu").operator.project_dir
        team = await scheduler.add_team("offline")  # a team added later joins the cpu project
        assert (Path(team.workspace) / "op_kernel" / "cmg_kernel.c").is_file()
        # the Judger of the run reviews the C port too
        judger = runtime.judger(scheduler, client=None)  # type: ignore[arg-type]
        assert judger.operator.project_dir == scheduler.operator.project_dir
        # a run's meta from before targets means cpu
        old = await runtime.lab.runs.create("before targets", meta={})
        assert runtime.scheduler(old).toolchain_id == "cpu"


def _cli(settings: Settings, *args: str) -> Result:
    """`justkernel ARGS` as a user runs it, on this lab's folders."""
    env = {
        "JUSTKERNEL_DATA_DIR": str(settings.data_dir),
        "JUSTKERNEL_CONFIG_DIR": str(settings.config_dir),
    }
    return CliRunner().invoke(app, list(args), env=env)


def test_the_run_command_chooses_the_target_and_a_resume_keeps_it(
    monkeypatch: pytest.MonkeyPatch, shared_lab_dir: Path, tmp_path: Path
) -> None:
    monkeypatch.delenv("JUSTKERNEL_TOOLCHAIN")  # the lab's default: ascendc-cpu
    settings = _settings(shared_lab_dir, tmp_path)
    done = _cli(settings, "run", "--toolchain", "cpu", "--minutes", "0.05", "--no-judger")
    assert done.exit_code == 0, done.output
    assert "target cpu" in done.output
    run_id = done.output.split("run ", 1)[1].split()[0]

    async def meta() -> dict[str, object]:
        async with open_runtime(settings, slots=1) as runtime:
            return (await runtime.lab.runs.get(run_id)).meta

    assert asyncio.run(meta())["toolchain"] == "cpu"
    refused = _cli(settings, "run", "--resume", run_id, "--toolchain", "ascendc-cpu")
    assert refused.exit_code != 0
    assert "is a cpu run" in refused.output and "keeps its target" in refused.output
    unknown = _cli(settings, "run", "--toolchain", "gpu")
    assert unknown.exit_code == 2 and "gpu" in unknown.output


async def test_the_report_names_the_runs_target(runtime: LabRuntime) -> None:
    run = await runtime.lab.runs.create("an ascendc run", meta={"toolchain": "ascendc-cpu"})
    markdown = await build_report(runtime.lab, run.id, "md")
    assert "Target: `ascendc-cpu`, the Ascend C (msopgen) project" in markdown
    html = await build_report(runtime.lab, run.id, "html")
    assert "Target: <code>ascendc-cpu</code>, the Ascend C (msopgen) project" in html


def test_check_says_whether_the_default_target_runs_here_and_how_to_switch() -> None:
    ready = [Capability("ascendc-cpu", True, "ok", "x"), Capability("sandbox", True, "ok", "x")]
    assert target_readiness("ascendc-cpu", ready) == (True, "default target ascendc-cpu: ready")
    old_gxx = Capability("ascendc-cpu", False, "g++ 11 found; needs g++ >= 12", "x")
    ok, line = target_readiness("ascendc-cpu", [old_gxx, ready[1]])
    assert not ok and "g++ 11 found" in line and "JUSTKERNEL_TOOLCHAIN=cpu" in line
    assert "--toolchain cpu" in line
