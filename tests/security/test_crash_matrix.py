"""Fault injection: `justkernel run` (one offline team on the lab's default target, Ascend C,
with the Judger and the local judge it starts) killed by SIGKILL at each named crash point
(`justkernel.faults`), on SQLite and on PostgreSQL, then `justkernel run --resume` without
the crash: no event lost or duplicated, no submission
sent twice, every official result recorded and delivered to the team exactly once (its own
message; the public copy skips the submitter), every delivery acknowledged once.

The cases share one lab data folder (receipts and packs of earlier cases answer the teams'
evaluations) and one judge folder (its receipt cache answers repeated sources), each with a
database of its own, so each case submits the playbook's sources afresh. The Judger's quota is
2 a day there, which keeps a case short and the judge's own quota of 50 far away.
`simulate.running` needs a real simulation, so its cases get a cold data folder of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from justkernel.core.targets import DEFAULT_TOOLCHAIN
from justkernel.faults import ENV
from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from justkernel.store.schema import board_messages, candidates, deliveries, events, submissions
from tests.support.labs import open_folder
from tests.support.server import assert_gone, server_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

RUN_RE = re.compile(r"run (run-[0-9]{8}-[0-9]{6}-[0-9a-f]+)")
RUN_SECONDS = 900
POINTS = (
    "simulate.running:2",  # the second case simulation starts while the first one runs
    "freeze.after",
    "submit.window",
    "official.before_feedback",
    "feedback.delivering",  # the team's inbox tool hands a feedback out
    "feedback.delivering:2",  # the team's next step acknowledges it
)


@dataclass(frozen=True)
class Shared:
    data: Path  # the warm lab data folder
    judge: Path  # the judge folder every case's lab starts its judge on


def _cli(env: dict[str, str], cwd: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    """`justkernel <args>` as a child of its own session, its output in `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "justkernel.cli.main", *args],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _set_quota(data: Path, config: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "judger", "set", "--quota", "2"],
        env=server_env(data, config),
        cwd=data.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def shared() -> Iterator[Shared]:
    folder = open_folder("jk-crash-")
    data = folder / "data"
    _set_quota(data, folder / "config")
    yield Shared(data, folder / "judge")
    shutil.rmtree(folder, ignore_errors=True)


def _judge_submissions(judge: Path) -> list[sqlite3.Row]:
    db = judge / "judge.db"
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("SELECT * FROM submissions ORDER BY seq").fetchall()


def _judge_pid(judge: Path) -> int | None:
    try:
        return int(json.loads((judge / "server.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def _wait_gone(pid: int, what: str) -> None:
    """A lab killed by SIGKILL takes its judge with it (PDEATHSIG): wait for it to go."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    assert_gone(pid, what)


async def _store(settings: Settings, run_id: str) -> dict[str, list[dict[str, object]]]:
    """What the lab recorded about the run, table by table."""
    lab = await open_lab(settings)
    try:
        out = {}
        async with lab.db.reader.connect() as conn:
            for name, table in (
                ("events", events),
                ("submissions", submissions),
                ("candidates", candidates),
                ("messages", board_messages),
                ("deliveries", deliveries),
            ):
                rows = await conn.execute(select(table).where(table.c.run_id == run_id))
                out[name] = [dict(r._mapping) for r in rows]
        out["events"].sort(key=lambda e: int(e["seq"]))  # type: ignore[arg-type]
        return out
    finally:
        await lab.close()


def _payload(event: dict[str, object]) -> dict[str, object]:
    return json.loads(str(event["payload"]))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("point", POINTS)
def test_a_crash_at_each_point_then_resume_loses_and_repeats_nothing(
    point: str, backend: str, shared: Shared, request: pytest.FixtureRequest
) -> None:
    case = open_folder("jk-crash-case-")
    data = shared.data
    if point.startswith("simulate."):  # a real simulation: no receipt may answer it
        data = case / "data"
        _set_quota(data, case / "config")
    url = (
        request.getfixturevalue("postgres_url")
        if backend == "postgres"
        else f"sqlite+aiosqlite:///{case / 'lab.db'}"
    )
    env = server_env(
        data,
        case / "config",
        JUSTKERNEL_DATABASE_URL=url,
        JUSTKERNEL_JUDGE_DIR=str(shared.judge),
        JUSTKERNEL_TOOLCHAIN=DEFAULT_TOOLCHAIN,  # the lab's default target, Ascend C
        COLUMNS="200",
    )
    env.pop(ENV, None)
    settings = Settings(data_dir=data, config_dir=case / "config", database_url=url)
    judged_before = len(_judge_submissions(shared.judge))
    log = case / "run.log"

    first = _cli({**env, ENV: point}, case, log, "run", "--teams", "1", "--minutes", "15")
    try:
        first.wait(timeout=RUN_SECONDS)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    output = log.read_text(errors="replace")
    assert first.returncode == -signal.SIGKILL, f"no crash at {point}:\n{output[-3000:]}"
    with contextlib.suppress(ProcessLookupError):  # what the lab's process group left behind
        os.killpg(first.pid, signal.SIGKILL)
    judge_pid = _judge_pid(shared.judge)
    if judge_pid is not None:
        _wait_gone(judge_pid, "the judge of the crashed lab")
    found = RUN_RE.search(output)
    assert found, output[-3000:]
    run_id = found.group(1)
    before = asyncio.run(_store(settings, run_id))

    second = _cli(env, case, log, "run", "--resume", run_id, "--minutes", "15")
    try:
        second.wait(timeout=RUN_SECONDS)
    finally:
        if second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait()
    output = log.read_text(errors="replace")
    assert second.returncode == 0, output[-4000:]
    after = asyncio.run(_store(settings, run_id))

    # no event lost or duplicated: the log before the crash is a prefix, gap-free, keys once
    seqs = [int(e["seq"]) for e in after["events"]]  # type: ignore[arg-type]
    assert seqs == list(range(1, len(seqs) + 1))
    assert after["events"][: len(before["events"])] == before["events"]
    keys = Counter(e["dedup_key"] for e in after["events"] if e["dedup_key"] is not None)
    assert [k for k, n in keys.items() if n > 1] == []
    stopped = [_payload(e) for e in after["events"] if e["kind"] == "run.dispatch_stopped"]
    assert stopped[-1]["reason"] == "no team has work left", output[-3000:]

    # no submission sent twice: the judge holds each source once, under the lab's own ids
    judged = _judge_submissions(shared.judge)[judged_before:]
    subs = after["submissions"]
    assert subs, "nothing was submitted"
    # at most the quota of the day: the untouched template is the team's baseline, never a
    # candidate, so the Judger submits one or two of its improvements, as the run's timing has it
    assert len(subs) <= 2
    assert Counter(j["source_sha256"] for j in judged) == Counter(s["source_sha256"] for s in subs)
    assert {j["id"] for j in judged} == {s["id"] for s in subs}
    judge_log = data / "logs" / "judge-server.log"
    judge_tail = judge_log.read_text(errors="replace")[-3000:] if judge_log.exists() else ""
    assert all(j["status"] == "finished" for j in judged), (
        [{k: j[k] for k in ("id", "status", "error")} for j in judged],
        judge_tail,
    )

    # every official result recorded, once per submission, and the candidate says so
    assert all(s["status"] in ("official_pass", "official_fail") for s in subs), subs
    results = [_payload(e) for e in after["events"] if e["kind"] == "official.result"]
    assert sorted(r["submission_id"] for r in results) == sorted(s["id"] for s in subs)
    status_of = {c["id"]: c["status"] for c in after["candidates"]}
    assert all(status_of[s["candidate_id"]] == s["status"] for s in subs)
    frozen = [_payload(e) for e in after["events"] if e["kind"] == "candidate.frozen"]
    assert {f["candidate_id"] for f in frozen} == set(status_of)
    # every new best was shared, even one frozen just before the crash
    bests, best = set(), None
    for f in frozen:
        if f["cycles_sum"] is not None and (best is None or f["cycles_sum"] < best):
            bests.add(f["candidate_id"])
            best = f["cycles_sum"]
    posted = {m["payload"]["candidate_id"] for m in after["messages"] if m["type"] == "candidate"}
    assert posted == bests

    # every result posted once to its team (the correction task) and once as the public news,
    # which skips the submitter (and so, with one team, reaches nobody); the team received each
    # result exactly once, acked and logged once, and no delivery of it is left pending
    messages = {m["id"]: m for m in after["messages"]}
    feedback = {
        str(m["sender_message_id"]): str(m["id"])
        for m in after["messages"]
        if m["type"] == "feedback"
    }
    team = str(subs[0]["team_id"])
    for sub in subs:
        for to in (team, "all"):
            assert f"result:{sub['id']}:{to}" in feedback, (sub["id"], to, sorted(feedback))
    assert len(feedback) == 2 * len(subs)
    rows = {(d["message_id"], d["team_id"]): d["status"] for d in after["deliveries"]}
    received = Counter(
        (team_id, messages[message_id]["payload"]["submission_id"])
        for (message_id, team_id) in rows
        if message_id in feedback.values()
    )
    assert received == Counter((team, sub["id"]) for sub in subs), (received, rows)
    for message_id in feedback.values():
        for (delivered, team_id), status in rows.items():
            if delivered == message_id:
                assert status == "acked", (messages[message_id], team_id, status)
    for sub in subs:
        own = feedback[f"result:{sub['id']}:{team}"]
        assert rows.get((own, team)) == "acked", (messages[own], rows)
    for kind in ("a2a.delivered", "a2a.acked"):
        seen = Counter(
            (e["team"], _payload(e)["message_id"]) for e in after["events"] if e["kind"] == kind
        )
        for message_id in feedback.values():
            wanted = 1 if (message_id, team) in rows else 0
            assert seen[(team, message_id)] == wanted, (kind, message_id)

    judge_pid = _judge_pid(shared.judge)
    if judge_pid is not None:
        assert_gone(judge_pid, "the judge the resumed lab started")
    shutil.rmtree(case, ignore_errors=True)
