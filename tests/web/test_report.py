"""The run report, from the CLI and from the dashboard's button: the goal, best candidates with
receipts and diffs, official results per point, Judger decisions and approvals, and the
cycles-over-time plot — Markdown and a standalone HTML page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from justkernel.events import NewEvent
from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, open_folder
from tests.web.synthetic import in_lab, judger_events, write_run


def _report(data: Path, config: Path, run_id: str, output: Path) -> str:
    env = {**os.environ, "JUSTKERNEL_DATA_DIR": str(data), "JUSTKERNEL_CONFIG_DIR": str(config)}
    done = subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "report", run_id, "--output", str(output)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return output.read_text()


def test_report_cli_writes_markdown_and_standalone_html(tmp_path: Path) -> None:
    folder = open_folder("jk-report-")
    data, config = folder / "data", folder / "config"
    events = [
        *judger_events("cand-aaa", "cand-bbb"),
        NewEvent(
            "judger.approval",
            {"candidate_id": "cand-bbb", "decision": "rejected", "by": "dashboard"},
        ),
        NewEvent(
            "source.changed", {"diff": "+fast loop\n-slow loop", "tree_sha256": "x"}, "team-001"
        ),
    ]
    run_id = in_lab(data, config, lambda lab: write_run(lab, "report run", events))

    markdown = _report(data, config, run_id, tmp_path / "run.md")
    for expected in (
        "## Goal",
        "Target: `cpu`, the C port",  # a run from before targets ran on the C port
        "## Best candidates (local receipts)",
        "520,000,000",
        "## Best cycles over time",
        "![Best measured estimated cycles per team",
        "## Official results per point",
        "| sub-0001 | cand-aaa | Qwen-001 |",  # the team as the dashboard names it
        "h02",
        "Verified SOTA: submission sub-0001",
        "## Judger decisions and approvals",
        "rejected by dashboard",
        "awaiting approval",
    ):
        assert expected in markdown, expected
    assert (tmp_path / "run-cycles.svg").read_text().startswith("<svg")

    html = _report(data, config, run_id, tmp_path / "run.html")
    assert html.startswith("<!doctype html>") and "<svg" in html and "<table>" in html
    assert "<script" not in html  # standalone and inert
    assert "http" not in html.split("<body>")[0]  # no external stylesheet or font


def test_dashboard_report_button_downloads_the_report(
    page: Page, server: RunningServer, shared: dict[str, Any], lab_dir: Path
) -> None:
    run_id = shared.get("run_id") or in_lab(
        lab_dir / "data",
        lab_dir / "config",
        lambda lab: write_run(lab, "report button", judger_events("cand-r1", "cand-r2")),
    )
    open_dashboard(page, server.base_url, run_id)
    with page.expect_download() as download:
        page.click("#report-html")
    html = Path(download.value.path()).read_text()
    assert "JustKernel run report" in html and "<svg" in html
    assert "Best candidates" in html and "Official results per point" in html
    if "run_id" in shared:  # the live run's workspace is in this lab: a real git diff
        assert "Diff against the baseline" in html
    page.click("#lang-btn")  # in Chinese, the report's headings follow (?lang=zh)
    try:
        with page.expect_download() as download:
            page.click("#report-html")
        zh = Path(download.value.path()).read_text()
        assert zh.startswith("<!doctype html><html lang='zh-CN'>") and "<h2>目标</h2>" in zh
    finally:
        page.click("#lang-btn")
