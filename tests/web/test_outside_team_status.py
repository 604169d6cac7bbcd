"""An outside agent that joined a run as a team (A2A) is never dispatched, so it never takes a
turn: the live view shows it as an outside agent with its last action over A2A (sent a
message, submitted a candidate, and how long ago), in English and Chinese, never as a team
queued for its first turn (issue #16, 13). The agent speaks to the real lab server's A2A
endpoint over HTTP, as an agent elsewhere would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from justkernel.a2a.external import join_external, team_path
from justkernel.core.events.runs import TeamRegistered
from justkernel.lab import Lab
from tests.support.a2a_agent import fixture_files, send_skill
from tests.support.server import RunningServer
from tests.web.conftest import VIEWPORT, open_dashboard, screenshot
from tests.web.synthetic import in_lab

NAME = "Outsider"  # the lab numbers it: Outsider-002


async def _arrange(lab: Lab, workspaces: Path) -> dict[str, str]:
    """A live run with one lab team (waiting for its first turn) and two outside agents."""
    run = await lab.runs.create("outside agents")
    local = await lab.teams.register(
        run.id, model_preset="offline", model_label="Local", workspaces_dir=workspaces
    )
    registered = TeamRegistered(display_name=local.display_name, model_preset="offline")
    await lab.events.append(run.id, registered, team=local.id)
    outsider = await join_external(lab, run.id, NAME)
    silent = await join_external(lab, run.id, "Silent")
    return {
        "run": run.id,
        "local": local.id,
        "team": outsider.team.id,
        "token": outsider.token,
        "silent": silent.team.id,
    }


def _select(page: Page, team_id: str) -> None:
    page.locator("#team-select").select_option(team_id)


def _no_queued(page: Page, *words: str) -> None:
    for selector in ("#team-status", "#plan-body"):
        text = page.locator(selector).text_content() or ""
        for word in words:
            assert word not in text, (selector, word, text)


def test_an_outside_team_shows_its_kind_and_last_action_never_queued(
    page: Page,
    browser: Browser,
    signed_in: Any,
    server: RunningServer,
    api: httpx.Client,
    lab_dir: Path,
) -> None:
    data, config = lab_dir / "data", lab_dir / "config"
    run = in_lab(data, config, lambda lab: _arrange(lab, data / "workspaces"))
    open_dashboard(page, server.base_url, run["run"])
    status, plan = page.locator("#team-status"), page.locator("#plan-body")

    # the lab team waits for its first turn: queued, as before
    _select(page, run["local"])
    expect(plan).to_contain_text("Queued")

    # the outside agent, before it did anything
    _select(page, run["team"])
    expect(status.locator(".outside-status")).to_have_text(
        " outside agent (A2A) · no action over A2A yet"
    )
    expect(status.locator(".status-dot.external")).to_have_count(1)
    expect(plan.locator(".outside-note")).to_contain_text(f"{NAME}-002 is an outside agent")
    _no_queued(page, "Queued", "queued", "idle")

    # it asks every team something over the real A2A endpoint: the page follows the stream
    url = server.base_url + team_path(run["team"])
    asked = send_skill(url, run["token"], "ask", {"to": "all", "text": "<b>anyone</b> faster?"})
    assert asked["status"]["state"] == "TASK_STATE_COMPLETED", asked["status"]
    expect(status.locator(".outside-status")).to_have_text(
        " outside agent (A2A) · last: sent a message to all teams just now"
    )
    assert status.locator("b").count() == 0

    # then it submits a candidate, evaluated by the lab
    submitted = send_skill(url, run["token"], "submit_candidate", fixture_files())
    assert submitted["status"]["state"] == "TASK_STATE_COMPLETED", submitted["status"]
    expect(status.locator(".outside-status")).to_have_text(
        " outside agent (A2A) · last: submitted a candidate (measured) just now", timeout=60_000
    )
    _no_queued(page, "Queued", "queued", "idle")
    view = api.get(f"/api/runs/{run['run']}/view").json()
    teams = {t["id"]: t for t in view["teams"]}
    assert teams[run["team"]]["external"] and teams[run["team"]]["status"] == "external"
    assert teams[run["team"]]["last_outside"]["action"] == "candidate"
    assert not teams[run["local"]]["external"] and teams[run["local"]]["status"] == "idle"
    screenshot(page, "outside-team")

    # the all-teams list and the graph say the same
    page.locator("#team-select").select_option("")
    rows = page.locator("#plan-body .team-list li")
    expect(rows).to_have_count(3)
    expect(rows.nth(1)).to_contain_text("outside agent (A2A) · last: submitted a candidate")
    expect(rows.nth(2)).to_contain_text("outside agent (A2A) · no action over A2A yet")
    expect(rows.nth(0)).to_contain_text("idle")
    node = page.locator(f"#graph g.node[data-team='{run['team']}']")
    expect(node).to_have_class("node status-external")
    expect(node.locator("title")).to_contain_text("outside agent (A2A)")

    # in Chinese
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN", storage_state=signed_in)
    try:
        zh = context.new_page()
        open_dashboard(zh, server.base_url, run["run"])
        _select(zh, run["team"])
        expect(zh.locator("#team-status .outside-status")).to_have_text(
            " 外部智能体（A2A） · 最近：刚刚提交了一个候选（已测量）"
        )
        expect(zh.locator("#plan-body .outside-note")).to_contain_text("是外部智能体")
        _no_queued(zh, "排队中", "空闲", "outside agent", "Queued")
        _select(zh, run["silent"])
        expect(zh.locator("#team-status .outside-status")).to_have_text(
            " 外部智能体（A2A） · 尚未通过 A2A 行动"
        )
        screenshot(zh, "outside-team-zh")
    finally:
        context.close()
