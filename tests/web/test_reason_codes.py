"""Reasons arrive as codes (issue #16, point 11, "Chinese end to end"): a paused team's reason
is a code with its values in the run view and the events API (an event written before the
codes gets the code its words say, from the server), and the Chinese dashboard shows a budget,
a watchdog and a provider pause, a failed turn and the run's stop in Chinese."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from justkernel.core.events.runs import DispatchStopped, TeamPaused, TeamRegistered, TeamTurnEnd
from justkernel.core.reasons import Reason, ReasonCode
from justkernel.events import NewEvent
from tests.support.server import RunningServer
from tests.web.conftest import VIEWPORT, open_dashboard, screenshot
from tests.web.synthetic import in_lab, write_run

BUDGET = Reason.of(ReasonCode.TEAM_CAP, team="team-001", cap=5000.0, unit="tokens")
FAILED = Reason.of(
    ReasonCode.TURN_FAILED, kind="transient", message="SandboxSetupError: no uid map", seconds=5.0
)
STOPPED = Reason.of(ReasonCode.RUN_CAP, cap=0.25, unit="USD")
# the words alone, as a log from before the codes holds them
OLD_PROVIDER_WORDS = "provider ds-main paused: the provider refused the API key (401)"


def _events() -> list[NewEvent]:
    return [
        NewEvent.of(TeamRegistered(display_name="Budget-A", model_preset="qwen"), "team-001"),
        NewEvent.of(TeamRegistered(display_name="Watch-B", model_preset="qwen"), "team-002"),
        NewEvent.of(TeamRegistered(display_name="Provider-C", model_preset="ds"), "team-003"),
        NewEvent.of(TeamPaused(**BUDGET.fields()), "team-001"),
        NewEvent.of(
            TeamTurnEnd(
                status="idle",
                detail=FAILED.text(),
                reason_code="turn_failed",
                reason_params=FAILED.params,
            ),
            "team-002",
        ),
        NewEvent.of(TeamPaused(**Reason.of(ReasonCode.WATCHDOG).fields()), "team-002"),
        NewEvent.of(TeamPaused(reason=OLD_PROVIDER_WORDS), "team-003"),
        NewEvent.of(DispatchStopped(**STOPPED.fields())),
    ]


@pytest.fixture(scope="module")
def paused_run(server: RunningServer, lab_dir: Any) -> str:
    return in_lab(
        lab_dir / "data", lab_dir / "config", lambda lab: write_run(lab, "reasons", _events())
    )


def test_a_paused_teams_reason_arrives_as_a_code(api: httpx.Client, paused_run: str) -> None:
    view = api.get(f"/api/runs/{paused_run}/view").json()
    teams = {t["id"]: t for t in view["teams"]}
    assert teams["team-001"]["status_reason_code"] == "team_cap"
    assert teams["team-001"]["status_reason_params"] == {
        "team": "team-001",
        "cap": 5000.0,
        "unit": "tokens",
    }
    assert teams["team-002"]["status_reason_code"] == "watchdog"
    assert teams["team-003"]["status_reason_code"] == "provider_paused"  # from its words
    assert teams["team-003"]["status_reason_params"]["connection"] == "ds-main"
    assert view["dispatch_reason_code"] == "run_cap"
    assert view["dispatch_reason_params"] == {"cap": 0.25, "unit": "USD"}

    events = api.get(f"/api/runs/{paused_run}/events", params={"kind": "team.paused"}).json()
    by_team = {e["team"]: e["payload"] for e in events["events"]}
    assert by_team["team-001"]["reason_code"] == "team_cap"
    assert by_team["team-003"]["reason_code"] == "provider_paused"  # the server's reading
    assert by_team["team-003"]["reason"] == OLD_PROVIDER_WORDS  # the words stay as written


def test_the_chinese_dashboard_shows_each_pause_in_chinese(
    browser: Browser, signed_in: Any, server: RunningServer, paused_run: str
) -> None:
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN", storage_state=signed_in)
    try:
        page = context.new_page()
        open_dashboard(page, server.base_url, paused_run)
        log = page.locator("#log-list")
        page.select_option("#team-select", "team-001")
        expect(page.locator("#team-status")).to_contain_text(
            "预算：本次调用会使团队 team-001 超出 5000 词元 的上限"
        )
        page.select_option("#team-select", "team-002")
        expect(page.locator("#team-status")).to_contain_text("没有进展：已被停滞看门狗暂停")
        turn_end = log.locator("[data-kind='team.turn_end']")
        expect(turn_end).to_contain_text("回合失败（临时错误）")
        expect(turn_end).to_contain_text("5 秒后重试")
        expect(turn_end).to_contain_text("SandboxSetupError: no uid map")  # its own words
        page.select_option("#team-select", "team-003")
        expect(page.locator("#team-status")).to_contain_text("服务商连接 ds-main 已暂停")
        page.select_option("#team-select", "")
        paused = log.locator("[data-kind='team.paused']")
        expect(paused).to_have_count(3)
        expect(paused.filter(has_text="看门狗")).to_have_count(1)
        expect(paused.filter(has_text="服务商连接 ds-main 已暂停")).to_have_count(1)
        expect(log.locator("[data-kind='run.dispatch_stopped']")).to_contain_text(
            "预算：本次调用会使运行超出 0.25 美元 的上限"
        )
        for text in page.locator("#log-list, #team-status").all_inner_texts():
            assert "paused" not in text and "budget" not in text and "would exceed" not in text
        screenshot(page, "reasons-zh")
    finally:
        context.close()
