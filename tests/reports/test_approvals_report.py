"""The run report's Approvals section (issue #17, 4): every decision a person took on a
supervised team's tool calls (approved, remembered, rejected with its reason, a revoked grant,
a mode change) and the cards still waiting, in log order, in English and in Chinese; a run
where nothing asked says so."""

from __future__ import annotations

from justkernel.agents.approval_desk import ApprovalDesk
from justkernel.lab import Lab
from justkernel.reports.report import build_report
from tests.reports.test_report_chinese import ENGLISH


async def test_the_report_lists_every_approval_decision(sqlite_lab: Lab, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lab = sqlite_lab
    run = await lab.runs.create("supervised")
    team = await lab.teams.register(
        run.id, model_preset="offline", model_label="Qwen", workspaces_dir=tmp_path, config={}
    )
    desk = ApprovalDesk.of(lab)
    await desk.set_mode(run.id, team.id, "ask", by="ana")
    full = await desk.request(run.id, team.id, "simulate_kernel", {}, "c1", mode="ask")
    share = await desk.request(run.id, team.id, "send_message", {"to": "all"}, "c2", mode="ask")
    waiting = await desk.request(run.id, team.id, "mcp_docs_search", {}, "c3", mode="ask")
    decided = await desk.decide(full.id, approve=True, remember=True, by="ana")
    await desk.decide(share.id, approve=False, by="bo", reason="keep it private")
    assert decided.grant_id is not None
    await desk.revoke(decided.grant_id, by="ana")

    english = (await build_report(lab, run.id, "md")).replace("\\_", "_")
    section = english.split("## Approvals", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("| #")]
    # in log order: the mode change, the card still waiting (asked third), then the decisions
    assert len(lines) == 5
    assert "ask" in lines[0] and "mode changed" in lines[0] and "ana" in lines[0]
    assert "mcp_docs_search" in lines[1] and "pending" in lines[1] and waiting.id in lines[1]
    assert "simulate_kernel (full)" in lines[2] and "approved, remembered" in lines[2]
    assert "send_message" in lines[3] and "rejected" in lines[3] and "keep it private" in lines[3]
    assert "grant revoked" in lines[4] and decided.grant_id in lines[4]

    chinese = await build_report(lab, run.id, "md", lang="zh")
    zh = chinese.split("## 工具调用审批", 1)[1]
    for word in ("已批准并记住", "已拒绝", "授权已撤销", "模式已更改", "待审批", "决定人"):
        assert word in zh, word
    zh_rows = [line.split("|")[2:] for line in zh.splitlines() if line.startswith("| #")]
    # the report's own words are Chinese; the data (tools, names, reasons) stays as it is
    assert not [c for row in zh_rows for c in row if ENGLISH.search(c) and "keep it" not in c]


async def test_a_run_where_nothing_asked_says_so(sqlite_lab: Lab) -> None:
    run = await sqlite_lab.runs.create("unsupervised")
    assert "No tool call of this run asked a person for approval." in await build_report(
        sqlite_lab, run.id, "md"
    )
    zh = await build_report(sqlite_lab, run.id, "md", lang="zh")
    assert "本次运行没有需要人工审批的工具调用。" in zh
