"""Browser fixtures: Debian's Chromium driven by Playwright against the real `justkernel serve`.

One lab server serves the whole session (its offline run is shared by the live, replay and
results tests); each test gets a fresh browser context that is already signed in (the
bootstrap token is one-time, so the session cookie it was traded for is reused). The browser
lives for one test module at a time: while sync Playwright runs, it owns the thread's event
loop, and the asyncio tests of other folders must find it free.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, sync_playwright

from justkernel.core.targets import DEFAULT_TOOLCHAIN
from tests.support.labs import open_folder
from tests.support.server import RunningServer, folder_server
from tests.web.synthetic import in_lab, steps_events, write_lineage_run, write_run

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "screenshots"
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


def trade_link(server: RunningServer) -> dict[str, Any]:
    """Trade the server's one-time link for the session cookie, as the browser would."""
    answer = httpx.get(server.link, follow_redirects=False, timeout=30)
    assert answer.status_code == 303, answer.text
    name = f"jk_session_{server.base_url.rsplit(':', 1)[1]}"  # the cookie is named for its port
    return {"name": name, "value": answer.cookies[name], "url": server.base_url}


def storage_state(session_cookie: dict[str, Any]) -> dict[str, Any]:
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


@pytest.fixture(scope="session")
def session_cookie(server: RunningServer) -> dict[str, Any]:
    return trade_link(server)


@pytest.fixture(scope="session")
def signed_in(session_cookie: dict[str, Any]) -> dict[str, Any]:
    return storage_state(session_cookie)


@pytest.fixture(scope="module")
def fresh_server() -> Iterator[RunningServer]:
    """A server of its own on a fresh lab folder (no run yet), for the module that asks."""
    folder = open_folder("jk-start-")
    try:
        with folder_server(folder) as running:
            yield running
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def fresh_signed_in(fresh_server: RunningServer) -> dict[str, Any]:
    """The fresh server's one-time link traded once, for every context of the module."""
    return storage_state(trade_link(fresh_server))


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
    """Save an artifact as artifacts/screenshots/NAME.png. The README's copies in
    docs/screenshots/ have one owner, the screenshot set (test_screenshot_set.py)."""
    path = ARTIFACTS / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), **options)
    return path


# the font of the element at `selector` drawing two different Chinese characters of its own
# text: with a CJK font their pixels differ; without one Chromium draws the same box for both
CJK_DRAWN = """(selector) => {
  const el = document.querySelector(selector);
  if (!el) return false;
  const chars = [...new Set(el.textContent.match(/[\u4e00-\u9fff]/g) || [])];
  if (chars.length < 2) return false;
  const font = getComputedStyle(el).fontFamily;
  const draw = (ch) => {
    const canvas = document.createElement('canvas');
    canvas.width = 64; canvas.height = 64;
    const ctx = canvas.getContext('2d');
    ctx.font = `48px ${font}`;
    ctx.fillText(ch, 4, 52);
    return Array.from(ctx.getImageData(0, 0, 64, 64).data).join(',');
  };
  const a = draw(chars[0]), b = draw(chars[1]), blank = draw(' ');
  return a !== blank && b !== blank && a !== b;
}"""


def cjk_drawn(page: Page, selector: str) -> bool:
    """The element at `selector` holds Chinese text that its font draws as real glyphs."""
    return bool(page.evaluate(CJK_DRAWN, selector))


def fill_bad_model_form(page: Page) -> Locator:
    """Open Configuration and submit a model preset the server refuses field by field."""
    page.click("[data-tab=config]")
    form = page.locator("#model-form")
    form.locator("[name=name]").fill("bad name!")
    form.locator("[name=provider]").select_option("openai_compatible")
    form.locator("[name=model]").fill("m")
    form.locator("[name=base_url]").fill("ftp://example")
    form.locator("[name=max_output_tokens]").fill("100000000000000000000")
    form.locator("[name=display_name]").fill("x" * 3000)
    form.locator("button[type=submit]").click()
    return form


@pytest.fixture(scope="module")
def lineage_run(lab_dir: Path, server: RunningServer) -> dict[str, str]:
    """`synthetic.write_lineage_run` in the server's store: the run's and candidates' ids."""
    return in_lab(lab_dir / "data", lab_dir / "config", write_lineage_run)


@pytest.fixture(scope="module")
def steps_run(server: RunningServer, lab_dir: Path) -> str:
    """A run of `synthetic.steps_events` in the server's store."""
    return in_lab(
        lab_dir / "data", lab_dir / "config", lambda lab: write_run(lab, "steps", steps_events())
    )
