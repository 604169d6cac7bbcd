"""The dashboard's "Resume connection" button (issue 15 point 3), in Debian's Chromium on the
real `justkernel serve`: a run whose preset holds a wrong key pauses its team for that
connection; the button tests the connection first and refuses while the key is still wrong;
once the key is fixed it resumes, and the resumed run's team takes its turn on the stand-in."""

from __future__ import annotations

import secrets

import httpx
from playwright.sync_api import Browser, expect

from tests.support.labs import open_folder
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.server import folder_server
from tests.support.views import wait_view
from tests.web.conftest import open_dashboard

KEY = f"sk-web-right-{secrets.token_hex(8)}"
WRONG = f"sk-web-wrong-{secrets.token_hex(8)}"
NAME = "conn_web"


def _save_preset(api: httpx.Client, base_url: str, key: str) -> None:
    form = {"name": NAME, "provider": "openai_compatible", "model": "m", "base_url": base_url}
    saved = api.post("/api/config/models", json={**form, "api_key": key})
    assert saved.status_code == 200, saved.text


def test_the_resume_button_tests_the_connection_and_the_team_continues(browser: Browser) -> None:
    folder = open_folder("jk-resume-button-")
    with (
        OpenAIServer(lambda body: Reply(text="All done. [done]"), api_key=KEY) as model,
        folder_server(folder, JUSTKERNEL_JUDGE="off") as server,  # no Judger: not its subject
    ):
        signed = httpx.get(server.link, follow_redirects=False, timeout=30)
        assert signed.status_code == 303, signed.text
        with httpx.Client(base_url=server.base_url, cookies=signed.cookies, timeout=60) as api:
            _save_preset(api, model.base_url, WRONG)
            task = {"name": "wrong key", "teams": [{"model": NAME}], "toolchain": "cpu"}
            started = api.post("/api/task/start", json=task)
            assert started.status_code == 200, started.text
            run_id = started.json()["run"]["id"]
            wait_view(
                api, run_id, lambda v: NAME in v["paused_providers"] and v["dispatch"] == "stopped"
            )

            context = browser.new_context()
            name = f"jk_session_{server.base_url.rsplit(':', 1)[1]}"
            context.add_cookies(
                [{"name": name, "value": signed.cookies[name], "url": server.base_url}]
            )
            try:
                page = context.new_page()
                open_dashboard(page, server.base_url, run_id)
                page.click("[data-tab=config]")
                button = page.locator(
                    f"#paused-providers li[data-provider='{NAME}'] button.resume-provider"
                )
                expect(button).to_have_text("Resume connection")
                button.click()  # the key is still wrong: the test fails, nothing resumes
                status = page.locator("#run-teams-body .form-status")
                expect(status).to_contain_text("Connection test failed")
                assert WRONG not in (status.text_content() or "")
                assert NAME in api.get(f"/api/runs/{run_id}/view").json()["paused_providers"]
                assert not api.get(
                    f"/api/runs/{run_id}/events", params={"kind": "provider.resumed"}
                ).json()["events"]

                _save_preset(api, model.base_url, KEY)  # the person fixes the key
                button.click()
                expect(page.locator("#paused-providers")).to_have_count(0)
                view = api.get(f"/api/runs/{run_id}/view").json()
                assert [t["status"] for t in view["teams"]] == ["idle"]

                served = len(model.chat_bodies)
                expect(page.locator("#run-resume")).to_be_enabled()
                page.click("#run-resume")
                view = wait_view(
                    api, run_id, lambda v: [t["status"] for t in v["teams"]] == ["done"]
                )
            finally:
                context.close()
        agent_calls = [b for b in model.chat_bodies[served:] if len(b["messages"]) > 1]
        assert agent_calls, "the resumed team's turn never reached the model"
