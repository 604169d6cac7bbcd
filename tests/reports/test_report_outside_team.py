"""An outside agent's team (A2A) is never dispatched, so it never takes a turn: the report's
Teams table says what it is, an outside agent, and what it last did over A2A, in English and
Chinese (issue #16, 13), never the "idle" (or "queued") of a team waiting for its first turn."""

from __future__ import annotations

import re

from justkernel.core.events.collab import A2AEvaluation, A2AMessage
from justkernel.core.events.runs import TeamRegistered
from justkernel.events import NewEvent
from justkernel.lab import Lab
from justkernel.reports.fold import RunState, fold_into
from justkernel.reports.report import build_report
from tests.web.synthetic import write_run


def _outside(name: str) -> TeamRegistered:
    return TeamRegistered(
        display_name=name,
        model_preset="external",
        provider="external",
        offline=False,
        config={"external": True, "sharing": "summary"},
    )


async def _run(lab: Lab) -> str:
    events = [
        NewEvent.of(TeamRegistered(display_name="Local-A", model_preset="qwen"), "team-001"),
        NewEvent.of(_outside("Outsider"), "team-002"),
        NewEvent.of(_outside("Quiet"), "team-003"),
        NewEvent.of(A2AMessage(message_id="m-1", to="all", type="message"), "team-002"),
        NewEvent.of(
            A2AEvaluation(task_id="t-1", status="measured", candidate_id="cand-x"), "team-002"
        ),
    ]
    return await write_run(lab, "outside", events)


def _row(text: str, name: str) -> str:
    [row] = [line for line in text.splitlines() if line.startswith(f"| {name}")]
    return row


async def test_the_fold_keeps_an_outside_teams_kind_and_last_action(sqlite_lab: Lab) -> None:
    run_id = await _run(sqlite_lab)
    run = await sqlite_lab.runs.get(run_id)
    state = await fold_into(sqlite_lab.events, RunState(run_id), run.last_seq)
    teams = ("team-001", "team-002", "team-003")
    local, outsider, quiet = (state.teams[t].summary() for t in teams)
    assert (local["external"], local["status"], local["last_outside"]) == (False, "idle", None)
    assert outsider["external"] and outsider["status"] == "external"
    last = outsider["last_outside"]
    assert last["action"] == "candidate" and last["status"] == "measured"
    assert last["candidate_id"] == "cand-x" and last["ts"] and last["seq"] == run.last_seq
    assert quiet["external"] and quiet["status"] == "external" and quiet["last_outside"] is None


async def test_the_teams_table_says_outside_agent_and_its_last_action(sqlite_lab: Lab) -> None:
    run_id = await _run(sqlite_lab)
    english = await build_report(sqlite_lab, run_id, "md", lang="en")
    row = _row(english, "Outsider")
    assert "outside agent (A2A)" in row
    assert re.search(r"last: submitted a candidate \(measured\) at \d{4}-\d\d-\d\d", row), row
    assert "no action over A2A yet" in _row(english, "Quiet")
    assert "| idle |" in _row(english, "Local-A")  # a lab team keeps its status
    for row in (_row(english, "Outsider"), _row(english, "Quiet")):
        assert "idle" not in row and "queued" not in row.lower()

    chinese = await build_report(sqlite_lab, run_id, "md", lang="zh")
    row = _row(chinese, "Outsider")
    assert "外部智能体（A2A）" in row and "提交了一个候选（已测量）" in row, row
    assert "尚未通过 A2A 行动" in _row(chinese, "Quiet")
    for row in (_row(chinese, "Outsider"), _row(chinese, "Quiet")):
        assert "空闲" not in row and "排队中" not in row and "outside agent" not in row

    for lang, words in (("en", "outside agent (A2A)"), ("zh", "外部智能体（A2A）")):
        html = await build_report(sqlite_lab, run_id, "html", lang=lang)
        assert html.count(words) == 2, lang  # both outside teams, and not the lab team


async def test_an_outside_teams_last_message_is_its_last_action(sqlite_lab: Lab) -> None:
    events = [
        NewEvent.of(_outside("Talker"), "team-001"),
        NewEvent.of(A2AEvaluation(task_id="t-1", status="incorrect"), "team-001"),
        NewEvent.of(A2AMessage(message_id="m-2", to="team-009", type="message"), "team-001"),
    ]
    run_id = await write_run(sqlite_lab, "talker", events)
    english = await build_report(sqlite_lab, run_id, "md", lang="en")
    assert "last: sent a message to team-009 at" in _row(english, "Talker")
    chinese = await build_report(sqlite_lab, run_id, "md", lang="zh")
    assert re.search(r"最近：于 [0-9: -]+ UTC 向 team-009 发送了一条消息", _row(chinese, "Talker"))
