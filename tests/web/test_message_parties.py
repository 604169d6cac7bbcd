"""A message row names its parties as the page does elsewhere: a team by its display name,
"all" and the Judger in the page's language, in the work log and the graph's edge tooltips
(before: "→ team-002", a raw "→ all" in the Chinese view, "team-002 → team-001" on an edge)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from justkernel.events import NewEvent
from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard
from tests.web.synthetic import in_lab, write_run

ROWS = "#log-list > li.ev[data-kind='a2a.message']"


def _registered(team: str, name: str) -> NewEvent:
    payload = {"display_name": name, "model_preset": "offline", "provider": "offline"}
    return NewEvent("team.registered", payload, team)


def _message(sender: str, to: str, summary: str) -> NewEvent:
    recipients = ["team-001"] if to == "all" else [to]  # the board's list of a broadcast
    payload = {"message_id": summary, "to": to, "recipients": recipients, "type": "experience"}
    return NewEvent("a2a.message", {**payload, "summary": summary}, sender)


def test_a_message_row_names_teams_by_name_and_all_in_the_page_language(
    page: Page, server: RunningServer, lab_dir
) -> None:
    events = [
        _registered("team-001", "Tiler"),
        _registered("team-002", "Fuser"),
        _message("team-001", "team-002", "to one"),
        _message("team-002", "all", "to everyone"),
    ]

    async def write(lab):  # type: ignore[no-untyped-def]
        return await write_run(lab, "message parties", events)

    run_id = in_lab(lab_dir / "data", lab_dir / "config", write)
    open_dashboard(page, server.base_url, run_id)
    page.select_option("#team-select", "")  # all teams: both senders' messages
    rows = page.locator(ROWS)
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="to one")).to_contain_text("→ Fuser")
    expect(rows.filter(has_text="to everyone")).to_contain_text("→ all teams")
    assert "team-002" not in rows.filter(has_text="to one").inner_text()
    # the A2A graph's edge says the same in its tooltip
    edge = page.locator("#graph path.edge[data-source='team-002'][data-target='team-001'] title")
    expect(edge).to_have_count(1)
    assert edge.text_content().startswith("Fuser → Tiler"), edge.text_content()
    page.click("#lang-btn")
    expect(rows.filter(has_text="to everyone")).to_contain_text("→ 所有队伍")
    page.click("#lang-btn")
