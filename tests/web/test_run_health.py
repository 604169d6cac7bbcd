"""The run's health in the header, in a real browser (issue #16, point 5): a run whose every
turn fails says so in red with the reason (before: "dispatching" over 1.5 minutes of
SandboxSetupError), in English and Chinese; a turn that worked in between hides it."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from justkernel.events import NewEvent
from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, screenshot
from tests.web.synthetic import in_lab, write_run

TEAM = "team-001"


def _turn_end(detail: str | None) -> NewEvent:
    return NewEvent("team.turn_end", {"status": "idle", "detail": detail}, TEAM)


SANDBOX = (
    "turn failed (unknown): SandboxSetupError: sandbox setup failed: bwrap: "
    "Creating new namespace failed; retry in 20 s"
)


def test_a_run_whose_every_turn_fails_says_so_in_red(
    page: Page, server: RunningServer, lab_dir
) -> None:
    """Before: the header said "dispatching" while every turn failed with SandboxSetupError."""
    registered = {"display_name": "Offline-001", "model_preset": "offline", "provider": "offline"}
    failing = [
        NewEvent("team.registered", registered, TEAM),
        NewEvent("run.dispatch_started", {"seconds": None}),
        *(_turn_end(SANDBOX) for _ in range(4)),
    ]
    healthy = [*failing[:2], _turn_end(SANDBOX), _turn_end(None), _turn_end(SANDBOX)]

    async def write(lab):  # type: ignore[no-untyped-def]
        return (
            await write_run(lab, "every turn fails", failing),
            await write_run(lab, "one turn failed", healthy),
        )

    failing_id, healthy_id = in_lab(lab_dir / "data", lab_dir / "config", write)
    open_dashboard(page, server.base_url, failing_id)
    health = page.locator("#run-health")
    expect(health).to_be_visible()
    expect(health).to_contain_text("No progress: the last 4 turns failed")
    expect(health).to_contain_text("SandboxSetupError")
    expect(health).to_contain_text("Creating new namespace failed")
    assert "retry in" not in health.inner_text()
    red = health.evaluate("e => getComputedStyle(e).backgroundColor")
    assert red == "rgb(179, 38, 30)"
    screenshot(page, "run-health-en")
    # the failed turns in the work log are errors (red), not grey like a plain turn end
    page.select_option("#team-select", TEAM)
    ends = page.locator("#log-list li.ev[data-kind='team.turn_end']")
    expect(ends).to_have_count(4)
    expect(page.locator("#log-list li.ev.failed")).to_have_count(4)
    expect(ends.first.locator(".chip.bad")).to_have_text("error")
    body = ends.first.locator(".ev-body")
    assert body.evaluate("e => getComputedStyle(e).color") == "rgb(248, 81, 73)"
    page.click("#lang-btn")
    expect(health).to_contain_text("没有进展：最近 4 个回合都失败了")
    screenshot(page, "run-health-zh")

    page.click("#lang-btn")
    open_dashboard(page, server.base_url, healthy_id)
    expect(page.locator("#run-badges")).to_contain_text("5 events")  # its view is in
    expect(health).to_be_hidden()  # a turn that worked in between: the run makes progress
    page.select_option("#team-select", TEAM)
    expect(page.locator("#log-list li.ev[data-kind='team.turn_end']")).to_have_count(3)
    expect(page.locator("#log-list li.ev.failed")).to_have_count(2)  # the plain end is not
