"""Browser fixtures: Debian's Chromium driven by Playwright against the real `justkernel serve`.

One lab server serves the whole session (its offline run is shared by the live, replay and
results tests); each test gets a fresh browser context that is already signed in (the
bootstrap token is one-time, so the session cookie it was traded for is reused). The browser
lives for one test module at a time: while sync Playwright runs, it owns the thread's event
loop, and the asyncio tests of other folders must find it free.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from justkernel.core.targets import DEFAULT_TOOLCHAIN
from tests.support.labs import open_folder
from tests.support.server import RunningServer, folder_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "screenshots"
DOC_SHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1440, "height": 880}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's Chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def lab_dir() -> Iterator[Path]:
    folder = open_folder("jk-web-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def server(lab_dir: Path) -> Iterator[RunningServer]:
    """The real server, with its data, config, models and hosts files in one private folder."""
    with folder_server(lab_dir) as running:
        yield running


@pytest.fixture(scope="session")
def session_cookie(server: RunningServer) -> dict[str, Any]:
    """Trade the one-time link for the session cookie, as the browser would."""
    answer = httpx.get(server.link, follow_redirects=False, timeout=30)
    assert answer.status_code == 303, answer.text
    name = f"jk_session_{server.base_url.rsplit(':', 1)[1]}"  # the cookie is named for its port
    return {"name": name, "value": answer.cookies[name], "url": server.base_url}


@pytest.fixture(scope="session")
def signed_in(session_cookie: dict[str, Any]) -> dict[str, Any]:
    """A storage state for new browser contexts: signed in already."""
    host = session_cookie["url"].split("//")[1].split(":")[0]
    cookie = {
        "name": session_cookie["name"],
        "value": session_cookie["value"],
        "domain": host,
        "path": "/",
        "httpOnly": True,
        "secure": False,
        "sameSite": "Strict",
        "expires": -1,
    }
    return {"cookies": [cookie], "origins": []}


@pytest.fixture
def context(browser: Browser, signed_in: dict[str, Any]) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport=VIEWPORT, locale="en-US", storage_state=signed_in)
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


@pytest.fixture(scope="session")
def api(server: RunningServer, session_cookie: dict[str, Any]) -> Iterator[httpx.Client]:
    """An HTTP client with the browser's session cookie, for arranging and checking state."""
    cookies = {session_cookie["name"]: session_cookie["value"]}
    with httpx.Client(base_url=server.base_url, cookies=cookies, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def shared() -> dict[str, Any]:
    """What one browser test leaves for the next (the offline run's id)."""
    return {}


@pytest.fixture
def offline_run(api: httpx.Client, shared: dict[str, Any]) -> str:
    """The live test's offline run; when a test runs alone, a short one started here. It runs
    on the lab's default target, Ascend C (the suite's server defaults to the C port), so the
    live view and the README's screenshots show what a user's first run shows."""
    if "run_id" in shared:
        return shared["run_id"]
    task = {"name": "offline run", "mode": "single", "toolchain": DEFAULT_TOOLCHAIN}
    answer = api.post("/api/task/start", json=task)
    assert answer.status_code == 200, answer.text
    run_id = answer.json()["run"]["id"]
    deadline = time.monotonic() + 120
    while api.get(f"/api/runs/{run_id}").json()["last_seq"] < 40:
        assert time.monotonic() < deadline, "the offline run produced too few events"
        time.sleep(0.5)
    api.post(f"/api/runs/{run_id}/pause")
    shared["run_id"] = run_id
    return run_id


def open_dashboard(page: Page, base_url: str, run_id: str | None = None) -> None:
    page.goto(f"{base_url}/" + (f"#run={run_id}" if run_id else ""))
    page.wait_for_selector("body[data-ready=true]")


def screenshot(page: Page, name: str, **options: Any) -> Path:
    """Save an artifact; with UPDATE_SCREENSHOTS=1 also the README's copy."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), **options)
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        DOC_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOC_SHOTS / f"{name}.png")
    return path
