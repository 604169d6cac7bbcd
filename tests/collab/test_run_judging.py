"""`justkernel run` on the embedded defaults judges: it starts the local judge on demand, its
Judger nominates, a human approves from another terminal (`justkernel judger approve`), the
approved candidate is submitted and its official result logged, a second decision is refused,
and stopping the run stops the judge it started."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from click.testing import Result

from justkernel.settings.config import Settings
from tests.support.cli import run_cli
from tests.support.judge import judge_dir_at
from tests.support.labs import open_folder
from tests.support.server import assert_gone, server_env

RUN_RE = re.compile(r"run (run-[0-9]{8}-[0-9]{6}-[0-9a-f]+)")
CANDIDATE_RE = re.compile(r"cand-[0-9a-f]{12}")
TIMEOUT = 600.0


def _cli(settings: Settings, *args: str) -> Result:
    """`justkernel ARGS` as the person in another terminal types it, on the run's folders (in
    this process: the run is the child below, and a fresh interpreter per command cost ~2 CPU-s)."""
    return run_cli(settings, *args, COLUMNS="200")


def _events(db: Path, run_id: str, kind: str) -> list[dict]:  # type: ignore[type-arg]
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT payload FROM events WHERE run_id = ? AND kind = ? ORDER BY seq", (run_id, kind)
        ).fetchall()
    return [json.loads(r[0]) for r in rows]


def _until(what: str, check, process: subprocess.Popen[str], output: list[str]):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        assert process.poll() is None, f"the run ended before {what}:\n" + "".join(output[-40:])
        time.sleep(1.0)
    raise AssertionError(f"timed out waiting for {what}:\n" + "".join(output[-40:]))


def test_a_headless_run_judges_with_a_human_in_the_loop() -> None:
    folder = open_folder("jk-run-judging-")
    env = server_env(folder / "data", folder / "config", COLUMNS="200")
    lab = Settings(data_dir=folder / "data", config_dir=folder / "config")
    db = folder / "data" / "justkernel.db"
    # the session judges' seed and points: their evaluation folder (inputs, receipts) is shared
    judge_dir = judge_dir_at(folder / "config" / "judge")

    refused = _cli(lab, "judger", "set", "--quota", "99")
    assert refused.exit_code == 2 and "quota_per_day" in refused.stderr
    assert _cli(lab, "judger", "set", "--human-approval").exit_code == 0
    assert json.loads((folder / "data" / "judger.json").read_text())["human_approval"] is True

    process = subprocess.Popen(
        [sys.executable, "-m", "justkernel.cli.main", "run", "--teams", "1", "--minutes", "9"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: output.extend(iter(process.stdout.readline, "")))
    reader.start()
    try:
        run_id = _until(
            "the run id",
            lambda: next((m.group(1) for m in map(RUN_RE.search, output) if m), None),
            process,
            output,
        )
        _until(
            "the Judger", lambda: any("Judger: local judge" in x for x in output), process, output
        )
        judge = json.loads((judge_dir / "server.json").read_text())  # started on demand
        assert judge["url"].startswith("http://127.0.0.1:")

        def awaiting() -> list[dict] | None:  # type: ignore[type-arg]
            return _events(db, run_id, "judger.nomination") or None

        # the log says when it is nominated (polling `judger pending` cost a fresh interpreter,
        # ~2 CPU-s, per second of the wait); then the person lists it as they would
        nominated = _until("a nomination awaiting approval", awaiting, process, output)
        assert nominated[0]["awaiting_approval"]

        def waiting() -> str | None:
            listed = _cli(lab, "judger", "pending", run_id)
            assert listed.exit_code == 0, listed.output
            found = CANDIDATE_RE.search(listed.stdout)
            return found.group(0) if found else None

        candidate = _until("the nomination listed as pending", waiting, process, output)
        assert nominated[0]["candidate_id"] == candidate
        assert _events(db, run_id, "judger.submission") == []  # nothing goes before a human

        approved = _cli(lab, "judger", "approve", run_id, candidate)
        assert approved.exit_code == 0, approved.output
        again = _cli(lab, "judger", "reject", run_id, candidate)
        assert again.exit_code == 2 and "not awaiting approval" in again.stderr

        result = _until(
            "the official result of the approved candidate",
            lambda: [
                r for r in _events(db, run_id, "official.result") if r["candidate_id"] == candidate
            ],
            process,
            output,
        )[0]
        assert result["backend"] == "local" and len(result["points"]) == 15
        decisions = _events(db, run_id, "judger.approval")
        assert decisions == [{"candidate_id": candidate, "decision": "approved", "by": "cli"}]
        submitted = _events(db, run_id, "judger.submission")
        assert [s["candidate_id"] for s in submitted] == [candidate]
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        process.wait(timeout=120)
        reader.join(timeout=10)
    assert process.returncode == 0, "".join(output[-40:])
    shown = "".join(output[-60:])  # the final table's caption tells the Judger's progress
    assert re.search(r"Judger: \d+ frozen, 1 submitted, 1 official results", shown), shown
    assert not (judge_dir / "server.json").exists()  # the judge it started has stopped
    assert_gone(judge["pid"], "the local judge the run started")
