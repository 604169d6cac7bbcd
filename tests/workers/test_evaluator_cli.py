"""`justkernel evaluate` as a user runs it: a real subprocess, real sandbox, real receipts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from justkernel.cli.main import app
from justkernel.operators import load_operator
from tests.workers.test_evaluator_shared import (
    SMALL_CASE,
    baseline_full_receipt,
    fresh_dir,
    make_project,
    require_tools,
    shared_settings,
)

pytestmark = pytest.mark.timeout(240)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed entry point in a subprocess, exactly as a user runs it."""
    env = {**os.environ, "JUSTKERNEL_DATA_DIR": str(shared_settings().resolved_data_dir)}
    env["COLUMNS"] = "120"
    return subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "evaluate", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=200,
        check=False,
    )


def cli_in_process(*args: str) -> Result:
    """The same command in this process (saves the CLI's start-up time)."""
    env = {"JUSTKERNEL_DATA_DIR": str(shared_settings().resolved_data_dir), "COLUMNS": "120"}
    return CliRunner().invoke(app, ["evaluate", *args], env=env)


async def test_evaluate_prints_the_template_as_measured() -> None:
    require_tools(valgrind=True)
    baseline = await baseline_full_receipt()  # the same data folder: the CLI gets this receipt
    done = cli(str(load_operator().project_dir))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "measured" in out and "yes (stored receipt" in out
    for case_id in (*baseline.case_ids, *baseline.perf_case_ids, "sum"):
        assert case_id in out
    assert f"{baseline.total_est_cycles:,}" in out
    assert baseline.source_sha256[:40] in out.replace("\n", "").replace("│", "").replace(" ", "")


def test_evaluate_json_probe_parses() -> None:
    require_tools()
    src = make_project("fast_fused_blocked", dest=fresh_dir("cli") / "project")
    done = cli_in_process(
        str(src), "--cases", f"c01_row_f32,{SMALL_CASE}", "--json", "--team", "cli"
    )
    assert done.exit_code == 0, done.output
    receipt = json.loads(done.stdout)
    assert receipt["status"] == "probe_passed" and receipt["kind"] == "probe"
    assert receipt["team"] == "cli" and receipt["cache_hit"] is False
    assert [c["case_id"] for c in receipt["cases"]] == ["c01_row_f32", SMALL_CASE]
    assert receipt["total_est_cycles"] is None  # not measured: missing, never 0


def test_evaluate_refuses_bad_input_with_exit_2(tmp_path: Path) -> None:
    missing = cli_in_process(str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "no such folder" in missing.stderr
    (tmp_path / "empty").mkdir()
    not_project = cli_in_process(str(tmp_path / "empty"))
    assert not_project.exit_code == 2 and "not a ConfusionMulGrad project" in not_project.stderr
    unknown = cli_in_process(str(load_operator().project_dir), "--cases", "c01_row_f32,c99_nope")
    assert unknown.exit_code == 2 and "c99_nope" in unknown.stderr
