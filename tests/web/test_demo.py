"""`justkernel demo` in a real browser whose network is limited to the demo server: the bundled
session plays (events arrive in the log, the graph fills), every screen says the data is
simulated, configuration is off, and nothing else was requested. The demo runs with a PATH
holding only Python, so it cannot have needed gcc, valgrind or bubblewrap."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from playwright.sync_api import Browser, Route, expect

from tests.support.server import start_demo, wait_for_link
from tests.web.conftest import VIEWPORT, screenshot

LEAKY_PRESET = """[models.leaky]
provider = "openai"
model = "gpt-x"
api_key_secret = "leaky_key"
"""


def test_demo_plays_offline_and_says_simulated_on_every_screen(
    browser: Browser, tmp_path: Path
) -> None:
    (tmp_path / "models.local.toml").write_text(LEAKY_PRESET)  # the demo must not read it
    (tmp_path / ".env").write_text("JUSTKERNEL_API_TOKEN=not-for-the-demo-0123456789abcdef\n")
    env = {
        "PATH": str(Path(sys.executable).parent),  # Python only: no gcc, valgrind, bwrap
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "PYTHONUNBUFFERED": "1",
    }
    process = start_demo(tmp_path, env, speed=30)
    output: list[str] = []
    try:
        link = wait_for_link(process, output)
        base = link.split("/auth/bootstrap")[0]
        assert any("simulated data" in line for line in output), output
        outside: list[str] = []
        context = browser.new_context(viewport=VIEWPORT, locale="en-US")

        def only_the_demo(route: Route) -> None:
            if route.request.url.startswith(base + "/"):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        context.route("**/*", only_the_demo)
        page = context.new_page()
        page.goto(link)
        page.wait_for_selector("body[data-ready=true]")

        banner = page.locator("#sim-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Simulated data")
        expect(page.locator("#run-badges .chip.simulated")).to_be_visible()
        # the session plays: events arrive, teams and A2A edges appear
        page.wait_for_selector("#log-list > li.ev.arrive", timeout=60_000)
        expect(page.locator("#graph g.node").first).to_be_visible()
        page.select_option("#team-select", "")
        page.wait_for_function(
            "() => document.querySelectorAll('#graph path.edge').length > 0", timeout=60_000
        )
        expect(page.locator("#log-list > li.ev").first).to_be_visible()
        screenshot(page, "demo")

        for tab in ("results", "config"):
            page.click(f"[data-tab={tab}]")
            expect(banner).to_be_visible()
        expect(page.locator("#config-disabled")).to_be_visible()
        models = page.evaluate("() => fetch('/api/config/models').then(r => r.json())")
        assert models["models"] == []
        refused = page.evaluate(
            "() => fetch('/api/config/models', {method: 'POST', body: '{}',"
            " headers: {'Content-Type': 'application/json'}}).then(r => r.status)"
        )
        assert refused == 403
        context.close()
        assert outside == [], f"the demo page asked for {outside}"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
