"""Issue 11 finding 4: cross-port CSRF, no Origin or Host checks.

`SameSite=Strict` treats every port of 127.0.0.1 as one site, so a page served on any other
local port could auto-submit a `text/plain` form to the lab with the session cookie attached,
and `json_body` parsed it: a preset was created. The cookie was named `jk_session` on every
port (the demo's replaced the lab's). And any `Host:` was served and reflected into the A2A
agent card's URL, so a DNS-rebinding page on `evil.example` could read the API.

Each test replays the attack over real HTTP against the real `justkernel serve`, with the
headers a browser sends. The Chromium test makes a real browser do it.
"""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from justkernel.a2a.external import join_external
from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from tests.security.web_lab import SignedIn, signed_in_lab
from tests.support.labs import open_folder

TOKEN = "b" * 32
PRESET = '{"name": "csrf", "provider": "openai_compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"}'


async def _seed_team(folder: Path) -> tuple[str, str]:
    lab = await open_lab(Settings(data_dir=folder / "data", config_dir=folder / "config"))
    try:
        run = await lab.runs.create("a2a card")
        joined = await join_external(lab, run.id, "Outside")
        return run.id, joined.team.id
    finally:
        await lab.close()


@pytest.fixture(scope="module")
def seeded() -> tuple[Path, str]:
    folder = open_folder("jk-sec-csrf-")
    _run_id, team_id = asyncio.run(_seed_team(folder))
    return folder, team_id


@pytest.fixture(scope="module")
def lab(seeded: tuple[Path, str]) -> Iterator[SignedIn]:
    with signed_in_lab(seeded[0], JUSTKERNEL_API_TOKEN=TOKEN) as running:
        yield running


def _preset_names(lab: SignedIn) -> set[str]:
    with lab.client() as api:
        return {m["name"] for m in api.get("/api/config/models").json()["models"]}


def test_a_cross_port_text_plain_form_post_is_refused(lab: SignedIn) -> None:
    other = f"http://127.0.0.1:{lab.port + 1}"
    with lab.client() as api:
        for headers in (
            # what a form with enctype=text/plain on another port sends
            {"Content-Type": "text/plain", "Origin": other, "Sec-Fetch-Site": "same-site"},
            # the same, from a browser that sends no Origin
            {"Content-Type": "text/plain", "Sec-Fetch-Site": "same-site"},
            # JSON from a foreign origin (a fetch that got through somehow)
            {"Content-Type": "application/json", "Origin": other},
            {"Content-Type": "application/json", "Origin": "null"},
            # our own origin, but not JSON
            {"Content-Type": "text/plain", "Origin": lab.server.base_url},
            {"Content-Type": "application/x-www-form-urlencoded"},
        ):
            answer = api.post("/api/config/models", content=PRESET, headers=headers)
            assert answer.status_code in (403, 415), (headers, answer.text)
            assert answer.json()["detail"], answer.text
        # a body-less POST from another port (a no-cors fetch) is refused by its Origin
        answer = api.post("/api/config/models/offline/test", headers={"Origin": other})
        assert answer.status_code == 403, answer.text
    assert "csrf" not in _preset_names(lab)


def test_the_dashboard_and_bearer_clients_still_work(lab: SignedIn) -> None:
    with lab.client() as api:
        own = {"Origin": lab.server.base_url, "Sec-Fetch-Site": "same-origin"}
        answer = api.post(
            "/api/config/models",
            content=PRESET,
            headers={**own, "Content-Type": "application/json"},
        )
        assert answer.status_code == 200, answer.text
        tested = api.post("/api/config/models/offline/test", headers=own)
        assert tested.status_code == 200, tested.text
    bearer = httpx.post(
        f"{lab.server.base_url}/api/config/models",
        json={"name": "scripted2", "provider": "offline", "model": "offline-playbook"},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert bearer.status_code == 200, bearer.text


def test_a_foreign_host_is_refused_on_every_route(lab: SignedIn, seeded: tuple[Path, str]) -> None:
    card = f"/a2a/teams/{seeded[1]}/.well-known/agent-card.json"
    with lab.client() as api:
        for path in ("/api/runs", "/", "/health", card):
            for host in (f"evil.example:{lab.port}", "evil.example", f"127.0.0.1:{lab.port + 1}"):
                answer = api.get(path, headers={"Host": host})
                assert answer.status_code in (400, 421), (path, host, answer.text)
                assert "evil" not in answer.text
        for host in (f"127.0.0.1:{lab.port}", f"localhost:{lab.port}", f"[::1]:{lab.port}"):
            assert api.get("/api/runs", headers={"Host": host}).status_code == 200, host


def test_the_agent_card_names_the_configured_origin_not_the_request_host(
    lab: SignedIn, seeded: tuple[Path, str]
) -> None:
    card = f"/a2a/teams/{seeded[1]}/.well-known/agent-card.json"
    answer = httpx.get(f"{lab.server.base_url}{card}", headers={"Host": f"localhost:{lab.port}"})
    assert answer.status_code == 200, answer.text
    urls = [i["url"] for i in answer.json()["supportedInterfaces"]]
    assert urls and all(u.startswith(f"http://127.0.0.1:{lab.port}/a2a/") for u in urls), urls


def test_the_session_cookie_is_named_for_its_port(lab: SignedIn) -> None:
    assert lab.cookie_name == f"jk_session_{lab.port}"
    # the same valid session under another port's name does not sign in here
    other = httpx.get(
        f"{lab.server.base_url}/api/runs",
        cookies={f"jk_session_{lab.port + 1}": lab.cookie_value, "jk_session": lab.cookie_value},
    )
    assert other.status_code == 401


def test_chromium_page_on_another_port_cannot_post_to_the_lab(lab: SignedIn) -> None:
    """The real proof: a browser signed in to the lab opens a page on another local port that
    auto-submits a text/plain form (and fires a no-cors fetch) at the lab."""
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's Chromium is not installed (apt-get install chromium)")
    target = f"{lab.server.base_url}/api/config/models"
    page_html = f"""<!doctype html><body>
<form id=f method=POST action="{target}" enctype="text/plain">
<input name='{{"name": "browser-csrf", "provider": "offline", "model": "o",
 "description": "' value='"}}'>
</form>
<script>
fetch("{target}", {{method: "POST", mode: "no-cors", credentials: "include",
  body: JSON.stringify({{name: "fetch-csrf", provider: "offline", model: "offline-playbook"}})}})
  .finally(() => document.getElementById("f").submit());
</script></body>""".encode()

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page_html)))
            self.end_headers()
            self.wfile.write(page_html)

        def log_message(self, *args: object) -> None:
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context()
                context.add_cookies(
                    [
                        {
                            "name": lab.cookie_name,
                            "value": lab.cookie_value,
                            "url": lab.server.base_url,
                            "httpOnly": True,
                            "sameSite": "Strict",
                        }
                    ]
                )
                page = context.new_page()
                with page.expect_navigation(url=f"{target}*", timeout=60_000) as landed:
                    page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
                response = landed.value
                assert response is not None
                assert response.status in (403, 415), response.text()
            finally:
                browser.close()
    finally:
        evil.shutdown()
        evil.server_close()
    assert not {"browser-csrf", "fetch-csrf"} & _preset_names(lab)


def test_a_configured_public_host_is_served_and_named_in_cards() -> None:
    """`JUSTKERNEL_PUBLIC_HOST` (for --allow-remote): that name is served too, and the card
    names it whichever allowed Host the request used."""
    folder = open_folder("jk-sec-public-")
    _run_id, team_id = asyncio.run(_seed_team(folder))
    card = f"/a2a/teams/{team_id}/.well-known/agent-card.json"
    with (
        signed_in_lab(folder, JUSTKERNEL_PUBLIC_HOST="lab.example") as lab,
        lab.client() as api,
    ):
        assert api.get("/api/runs", headers={"Host": f"lab.example:{lab.port}"}).is_success
        refused = api.get("/api/runs", headers={"Host": f"evil.example:{lab.port}"})
        assert refused.status_code == 421
        answer = api.get(card, headers={"Host": f"127.0.0.1:{lab.port}"})
        urls = [i["url"] for i in answer.json()["supportedInterfaces"]]
        assert urls == [f"http://lab.example:{lab.port}/a2a/teams/{team_id}/"], urls
