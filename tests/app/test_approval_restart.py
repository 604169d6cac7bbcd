"""A pending approval survives `kill -9` of the lab and `justkernel run --resume` (issue #17,
4): a real `justkernel run --approval-mode ask` (offline team, its own process) stops at its
first full simulation; the lab is killed with SIGKILL while the card waits; the resumed run
keeps the card pending and the team waiting (the simulation never runs by itself); a decision
from another terminal (`justkernel approvals approve`) then continues the team at that very
call, from the durable checkpoint."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from justkernel.settings.config import Settings
from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
NAME = "approval crash test"


def _rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # not migrated yet, or busy: ask again
        return []


def _wait(check: Any, what: str, process: subprocess.Popen[str], limit: float) -> Any:
    """Poll generously (a loaded host is slow); fail naming what never happened, or how the
    process ended early."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if value := check():
            return value
        if process.poll() is not None:
            raise AssertionError(f"the lab ended ({process.returncode}) before: {what}")
        time.sleep(0.5)
    raise AssertionError(f"never happened: {what}")


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[str]:
    with log.open("w") as out:  # a file, not a pipe nobody reads while the test waits
        return subprocess.Popen(
            argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip


@pytest.mark.timeout(1500)
def test_a_pending_approval_survives_kill_9_and_resume(
    lab_settings: Settings, tmp_path: Path
) -> None:
    data = lab_settings.resolved_data_dir
    env = {
        **os.environ,
        "JUSTKERNEL_DATA_DIR": str(data),
        "JUSTKERNEL_CONFIG_DIR": str(lab_settings.config_dir),
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "200",
    }
    argv = [sys.executable, "-m", "justkernel.cli.main", "run", "--minutes", "20", "--no-judger"]
    db = data / "justkernel.db"
    first = _start([*argv, "--name", NAME, "--approval-mode", "ask"], env, tmp_path / "1.log")
    try:
        card = _wait(
            lambda: _rows(
                db,
                "select a.id, a.run_id, a.team_id, a.tool_call_id from approval_requests a "
                "join runs r on a.run_id = r.id where r.name = ? and a.status = 'pending'",
                NAME,
            ),
            "a card for the team's first full simulation",
            first,
            600,
        )[0]
        request_id, run_id, team_id, call_id = card
        _wait(
            lambda: _rows(
                db,
                "select 1 from teams where run_id = ? and id = ? and status = 'awaiting_approval'",
                run_id,
                team_id,
            ),
            "the team waits for the person",
            first,
            120,
        )
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()

    def simulated() -> list[tuple[Any, ...]]:
        return _rows(
            db,
            "select seq from events where run_id = ? and kind = 'tool.result' "
            "and json_extract(payload, '$.id') = ?",
            run_id,
            call_id,
        )

    assert simulated() == []
    second = _start([*argv, "--resume", run_id], env, tmp_path / "2.log")
    try:
        # the resumed lab dispatches again, and its passes leave the card and the team waiting
        _wait(
            lambda: (
                len(
                    _rows(
                        db,
                        "select seq from events where run_id = ? and kind = 'run.dispatch_started'",
                        run_id,
                    )
                )
                >= 2
            ),
            "the resumed run dispatches",
            second,
            300,
        )
        time.sleep(5)  # several dispatch passes of the resumed lab
        assert _rows(db, "select status from approval_requests where id = ?", request_id) == [
            ("pending",)
        ]
        assert _rows(
            db, "select status from teams where run_id = ? and id = ?", run_id, team_id
        ) == [("awaiting_approval",)]
        assert simulated() == []

        approved = run_cli(lab_settings, "approvals", "approve", run_id, request_id, "--remember")
        assert approved.exit_code == 0, approved.stderr
        # the team goes on at that very call: the simulation runs and its result is logged
        _wait(simulated, "the approved simulation ran in the resumed lab", second, 600)
    finally:
        os.killpg(second.pid, signal.SIGKILL)
        second.wait()

    kinds = [
        k
        for (k,) in _rows(
            db,
            "select kind from events where run_id = ? and kind like 'approval.%' order by seq",
            run_id,
        )
    ]
    # one card for the call, asked once although its node re-ran after the restart
    assert kinds[:4] == [
        "approval.mode_changed",
        "approval.requested",
        "approval.decided",
        "approval.grant_added",
    ]
    assert asyncio.run(_requests(lab_settings, run_id)) >= 1


async def _requests(settings: Settings, run_id: str) -> int:
    from justkernel.agents.approval_desk import ApprovalDesk
    from justkernel.lab import open_lab

    lab = await open_lab(settings)
    try:
        decided = await ApprovalDesk.of(lab).requests(run_id)
        assert decided[0].status == "approved" and decided[0].remember
        return len(decided)
    finally:
        await lab.close()
