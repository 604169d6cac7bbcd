"""Approval cards in Debian's Chromium (issue #17, 4) on the real `justkernel serve`: a card
appears above the live view; approve, reject (with a reason) and approve-and-remember from the
page reach the store as the dashboard's decisions; the remembered grant is listed and revoked
from the page; the model's arguments are shown as text (markup in them never runs); the
strip speaks Chinese. End to end: a run started from the dashboard's form in `ask` mode stops
at the offline team's first full simulation, the lab is killed with SIGKILL, a second lab on
the same folder shows the card still pending, and remembering it from the page lets the
resumed team run that simulation."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from justkernel.agents.approval_desk import ApprovalDesk
from justkernel.core.approvals import ApprovalMode
from justkernel.lab import Lab
from tests.support.labs import open_folder
from tests.support.server import RunningServer, folder_server
from tests.web.conftest import VIEWPORT, open_dashboard, screenshot
from tests.web.synthetic import in_lab

HOSTILE = "<img src=x onerror=\"document.title='owned'\">"
SLOW = 600.0  # seconds a real offline team may take to reach its first full simulation


async def _arrange(lab: Lab, workspaces: Path, name: str) -> dict[str, str]:
    """A live run whose one team waits on three cards: a full simulation, a share carrying
    markup, and an official submission."""
    run = await lab.runs.create(name)
    team = await lab.teams.register(
        run.id, model_preset="offline", model_label="Offline", workspaces_dir=workspaces
    )
    desk = ApprovalDesk.of(lab)
    await desk.set_mode(run.id, team.id, ApprovalMode.ASK, by="test")
    full = await desk.request(
        run.id, team.id, "simulate_kernel", {"mode": "full"}, "c1", mode="ask"
    )
    share = await desk.request(
        run.id, team.id, "send_message", {"to": "all", "text": HOSTILE}, "c2", mode="ask"
    )
    submit = await desk.request(
        run.id, team.id, "submit_candidate", {"note": "best so far"}, "c3", mode="ask"
    )
    return {
        "run": run.id,
        "team": team.id,
        "full": full.id,
        "share": share.id,
        "submit": submit.id,
    }


def _cards(lab_dir: Path, name: str) -> dict[str, str]:
    data, config = lab_dir / "data", lab_dir / "config"
    return in_lab(data, config, lambda lab: _arrange(lab, data / "workspaces", name))


def _card(page: Page, approval: str) -> Any:
    return page.locator(f"#approvals article.approval-card[data-approval='{approval}']")


def _pending(api: httpx.Client, run_id: str) -> list[str]:
    listed = api.get(f"/api/runs/{run_id}/approvals").json()["approvals"]
    return [item["id"] for item in listed]


def _decided(api: httpx.Client, run_id: str) -> dict[str, dict[str, Any]]:
    events = api.get(f"/api/runs/{run_id}/events", params={"kind": "approval.decided"}).json()
    return {e["payload"]["request_id"]: e["payload"] for e in events["events"]}


def test_cards_are_decided_remembered_and_revoked_from_the_page(
    page: Page, server: RunningServer, api: httpx.Client, lab_dir: Path
) -> None:
    # the task's approval mode is checked like every other field
    bad = api.put("/api/config/task", json={"name": "t", "approval_mode": "yolo"})
    assert bad.status_code == 400
    assert "approval_mode" in bad.json()["errors"]

    cards = _cards(lab_dir, "approval cards")
    run_id = cards["run"]
    open_dashboard(page, server.base_url, run_id)
    strip = page.locator("#approvals")
    expect(strip).to_be_visible()
    expect(strip.locator(".approvals-head")).to_contain_text("3 waiting for your decision")
    full, share, submit = (_card(page, cards[k]) for k in ("full", "share", "submit"))
    expect(full).to_contain_text("simulate_kernel")
    expect(full.locator(".chip.kind")).to_have_text("full")
    expect(full.locator(".args")).to_contain_text('"mode": "full"')

    # the model's markup is text: shown as sent, never an element, never run
    expect(share.locator(".args")).to_contain_text(json.dumps(HOSTILE))
    assert share.locator("img").count() == 0
    assert page.title() != "owned"

    share.locator("input.reason").fill("no sharing before review")
    share.locator("button[data-decision=reject]").click()
    expect(share).to_have_count(0)
    submit.locator("button[data-decision=approve]").click()
    expect(submit).to_have_count(0)
    full.locator("button[data-decision=remember]").click()
    expect(full).to_have_count(0)
    expect(strip.locator(".approvals-head")).to_contain_text("Nothing waits")

    decided = _decided(api, run_id)
    assert decided[cards["share"]]["decision"] == "rejected"
    assert decided[cards["share"]]["reason"] == "no sharing before review"
    assert decided[cards["submit"]]["decision"] == "approved"
    assert decided[cards["full"]]["decision"] == "approved"
    assert {d["by"] for d in decided.values()} == {"dashboard"}
    grants = api.get(f"/api/runs/{run_id}/approvals/grants").json()["grants"]
    assert [(g["team_id"], g["tool"], g["kind"]) for g in grants] == [
        (cards["team"], "simulate_kernel", "full")
    ]

    # the grant in the settings, revoked from there
    strip.locator("details.approval-settings > summary").click()
    grant = strip.locator(f"li[data-grant='{grants[0]['id']}']")
    expect(grant).to_contain_text("simulate_kernel · full")
    screenshot(page, "approvals-grant")
    grant.locator("button.revoke").click()
    expect(grant).to_have_count(0)
    expect(strip.locator(".settings-status")).to_contain_text("Grant revoked")
    assert api.get(f"/api/runs/{run_id}/approvals/grants").json()["grants"] == []
    revoked = api.get(f"/api/runs/{run_id}/events", params={"kind": "approval.grant_revoked"})
    assert [e["payload"]["by"] for e in revoked.json()["events"]] == ["dashboard"]
    assert page.title() != "owned"


def test_a_card_decided_elsewhere_leaves_the_page_and_a_refusal_is_in_chinese(
    browser: Browser, signed_in: Any, server: RunningServer, api: httpx.Client, lab_dir: Path
) -> None:
    cards = _cards(lab_dir, "approval cards zh")
    run_id = cards["run"]
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN", storage_state=signed_in)
    try:
        page = context.new_page()
        open_dashboard(page, server.base_url, run_id)
        strip = page.locator("#approvals")
        expect(strip.locator(".approvals-head h2")).to_have_text("审批")
        expect(strip.locator(".approvals-head")).to_contain_text("3 项等待你的决定")
        full = _card(page, cards["full"])
        expect(full.locator("button[data-decision=approve]")).to_have_text("批准")
        expect(full.locator("button[data-decision=reject]")).to_have_text("拒绝")
        expect(full.locator("button[data-decision=remember]")).to_have_text("批准并为该团队记住")
        strip.locator("details.approval-settings > summary").click()
        mode = strip.locator(f"tr[data-team='{cards['team']}'] select.mode")
        expect(mode.locator("option:checked")).to_have_text("询问")
        screenshot(page, "approvals-zh")

        # another person took the share first (the CLI, another tab): this page's click is
        # refused with the code's words in Chinese, and nothing changes
        origin = {"Origin": server.base_url}
        taken = api.post(
            f"/api/runs/{run_id}/approvals/{cards['share']}/decide",
            json={"decision": "reject"},
            headers=origin,
        )
        assert taken.status_code == 200, taken.text
        share = _card(page, cards["share"])
        share.locator("button[data-decision=approve]").click()
        status = share.locator(".card-status")
        expect(status).to_contain_text("已经决定过")  # the code's words, not the English detail
        assert "already" not in (status.text_content() or "").lower()
        assert _decided(api, run_id)[cards["share"]]["decision"] == "rejected"  # unchanged
        # a decision elsewhere reaches the page over the run's stream: the card leaves
        api.post(
            f"/api/runs/{run_id}/approvals/{cards['submit']}/decide",
            json={"decision": "approve"},
            headers=origin,
        )
        expect(_card(page, cards["submit"])).to_have_count(0)
    finally:
        context.close()


# -- end to end: a real run, kill -9, a second lab on the same folder ---------------------------


def _signed(server: RunningServer) -> httpx.Cookies:
    answer = httpx.get(server.link, follow_redirects=False, timeout=30)
    assert answer.status_code == 303, answer.text
    return answer.cookies


def _context(browser: Browser, server: RunningServer, cookies: httpx.Cookies) -> BrowserContext:
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    name = f"jk_session_{server.base_url.rsplit(':', 1)[1]}"
    context.add_cookies([{"name": name, "value": cookies[name], "url": server.base_url}])
    context.set_default_timeout(30_000)
    return context


def _wait(check: Callable[[], Any], what: str, limit: float) -> Any:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.5)
    raise AssertionError(f"never happened: {what}")


def _decided_seq(api: httpx.Client, run_id: str, approval: str) -> int:
    events = api.get(f"/api/runs/{run_id}/events", params={"kind": "approval.decided"}).json()
    return next(e["seq"] for e in events["events"] if e["payload"]["request_id"] == approval)


def _events(api: httpx.Client, run_id: str, kind: str) -> list[dict[str, Any]]:
    return api.get(f"/api/runs/{run_id}/events", params={"kind": kind}).json()["events"]


@pytest.mark.timeout(1800)
def test_a_pending_card_survives_kill_9_and_the_resumed_team_goes_on(browser: Browser) -> None:
    folder = open_folder("jk-approval-cards-")
    with folder_server(folder, JUSTKERNEL_JUDGE="off") as first:  # no Judger: not the subject
        cookies = _signed(first)
        context = _context(browser, first, cookies)
        try:
            page = context.new_page()
            open_dashboard(page, first.base_url)
            page.click("[data-tab=config]")
            form = page.locator("#task-form")
            expect(form).to_be_visible()
            form.locator("[name=name]").fill("supervised from the page")
            form.locator("[name=mode]").select_option("single")
            form.locator("[name=toolchain]").select_option("cpu")
            form.locator("[name=approval_mode]").select_option("ask")
            before = page.evaluate("location.hash")
            page.click("#task-start")
            page.wait_for_function(
                "(before) => location.hash.includes('run=') && location.hash !== before",
                arg=before,
            )
            run_id = page.evaluate("decodeURIComponent(location.hash.split('run=')[1])")
            page.click("[data-tab=live]")
            card = page.locator("#approvals article.approval-card[data-tool=simulate_kernel]")
            expect(card).to_be_visible(timeout=SLOW * 1000)
            expect(card.locator(".chip.kind")).to_have_text("full")
            approval = card.get_attribute("data-approval")
            assert approval
        finally:
            context.close()
        os.killpg(first.process.pid, signal.SIGKILL)  # the lab dies while the card waits
        first.process.wait()

    with folder_server(folder, JUSTKERNEL_JUDGE="off") as second:
        cookies = _signed(second)
        with httpx.Client(base_url=second.base_url, cookies=cookies, timeout=60) as api:
            assert approval in _pending(api, run_id)
            context = _context(browser, second, cookies)
            try:
                page = context.new_page()
                open_dashboard(page, second.base_url, run_id)
                card = _card(page, approval)
                expect(card).to_be_visible()  # still pending after the crash
                page.click("[data-tab=config]")
                expect(page.locator("#run-resume")).to_be_enabled()
                page.click("#run-resume")
                _wait(
                    lambda: len(_events(api, run_id, "run.dispatch_started")) >= 2,
                    "the resumed run dispatches",
                    120,
                )
                time.sleep(3)  # a few dispatch passes: the card still waits, nothing ran
                team = api.get(f"/api/runs/{run_id}/view").json()["teams"][0]
                assert team["status"] == "awaiting_approval"
                assert approval in _pending(api, run_id)
                before = _events(api, run_id, "tool.result")
                assert not [e for e in before if e["payload"].get("name") == "simulate_kernel"]

                page.click("[data-tab=live]")
                card.locator("button[data-decision=remember]").click()
                expect(card).to_have_count(0)
                ran = _wait(
                    lambda: [
                        e
                        for e in _events(api, run_id, "tool.result")
                        if e["payload"].get("name") == "simulate_kernel"
                    ],
                    "the approved simulation ran in the second lab",
                    SLOW,
                )
                decided = _decided(api, run_id)[approval]
                assert decided["by"] == "dashboard" and decided["remember"] is True
                assert ran[0]["seq"] > _decided_seq(api, run_id, approval)
                grants = api.get(f"/api/runs/{run_id}/approvals/grants").json()["grants"]
                assert [(g["tool"], g["kind"]) for g in grants] == [("simulate_kernel", "full")]
            finally:
                context.close()
