"""Refusals as codes the dashboard translates (issue #16, 11): each refused field comes with a
code and its parameters (the allowed range as a number, the allowed values), never a regex or
pydantic's wording; the page shows it in English or Chinese under its field; saving a preset
never reports a field the form does not have (the phantom `api_key_secret`)."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.server import RunningServer
from tests.web.conftest import fill_bad_model_form, open_dashboard, screenshot

BAD_PRESET = {
    "name": "bad name!",
    "provider": "openai_compatible",
    "model": "m",
    "base_url": "ftp://example",
    "max_output_tokens": 10**20,
    "display_name": "x" * 3000,
    "reasoning_effort": "huge",
}


def test_refusals_carry_codes_with_their_range(api: httpx.Client) -> None:
    answer = api.post("/api/config/models", json=BAD_PRESET)
    assert answer.status_code == 400
    codes = answer.json()["codes"]
    assert codes == {
        "name": {"code": "bad_name", "max": 64},
        "base_url": {"code": "url_scheme"},
        "max_output_tokens": {"code": "too_large", "max": 1_000_000},
        "display_name": {"code": "too_long", "max": 80},
        "reasoning_effort": {"code": "one_of", "allowed": ["minimal", "low", "medium", "high"]},
    }
    assert "pattern" not in str(answer.json()["errors"])  # no regex in any message
    assert "api_key_secret" not in answer.json()["errors"]

    answer = api.put("/api/config/task", json={"slots": 99, "minutes": 0})
    assert answer.status_code == 400
    codes = answer.json()["codes"]
    assert codes["slots"] == {"code": "too_large", "max": 8}
    assert codes["minutes"] == {"code": "must_exceed", "limit": 0}
    task = {"mode": "single", "teams": [{"model": "nope"}, {}]}
    codes = api.put("/api/config/task", json=task).json()["codes"]
    assert codes["teams"] == {"code": "single_one_team"}
    assert codes["teams.0.model"] == {"code": "unknown_preset", "name": "nope"}

    host = {"name": "h", "address": "not an address;rm -rf /", "user": "-oProxy", "port": 0}
    answer = api.post("/api/config/workers/hosts", json=host)
    assert answer.status_code == 400
    codes = answer.json()["codes"]
    assert codes["address"] == {"code": "host_address"}
    assert codes["port"] == {"code": "too_small", "min": 1}
    assert codes["user"] == {"code": "bad_format"}

    answer = api.post(
        "/api/config/models", content=b"[1]", headers={"Content-Type": "application/json"}
    )
    assert answer.json()["codes"] == {"form": {"code": "not_object"}}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_form_errors_show_in_the_page_language(
    page: Page, server: RunningServer, lang: str
) -> None:
    page.add_init_script(f"localStorage.setItem('jk.lang', '{lang}')")
    open_dashboard(page, server.base_url)
    form = fill_bad_model_form(page)
    limit = form.locator(".error[data-error-for='max_output_tokens']")
    if lang == "zh":
        expect(limit).to_have_text("最大为 1,000,000。")
        expect(form.locator(".error[data-error-for='display_name']")).to_have_text(
            "最多 80 个字符。"
        )
        expect(form.locator(".error[data-error-for='base_url']")).to_contain_text("必须以")
        expect(form.locator(".error[data-error-for='name']")).to_contain_text("字母")
    else:
        expect(limit).to_have_text("At most 1,000,000.")
        expect(form.locator(".error[data-error-for='name']")).to_contain_text("letters, digits")
    texts = " ".join(form.locator(".error").all_inner_texts())
    assert "Input should" not in texts and "pattern" not in texts
    assert "api_key_secret" not in form.locator(".form-status").inner_text()
    form.scroll_into_view_if_needed()
    for width, height in ((1440, 900), (1024, 700)):
        page.set_viewport_size({"width": width, "height": height})
        form.scroll_into_view_if_needed()
        screenshot(page, f"config-errors-{lang}-{width}")
