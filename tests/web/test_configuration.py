"""Configuration in a real browser: invalid input is refused field by field; a model connection
saved through the form is stored (preset in models.local.toml, key encrypted in the secrets
store), tests green against a real OpenAI-compatible server, and its key never appears in any
response or page."""

from __future__ import annotations

import secrets
import tomllib
from pathlib import Path

import httpx
from playwright.sync_api import Page, Response, expect

from justkernel.settings.secrets import SecretsStore
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, screenshot


def _error(page: Page, form: str, name: str) -> str:
    return page.locator(f"{form} .error[data-error-for='{name}']").inner_text()


def test_model_key_is_stored_encrypted_and_never_comes_back(
    page: Page, server: RunningServer, api: httpx.Client, lab_dir: Path
) -> None:
    key = f"sk-jk-{secrets.token_hex(20)}"
    responses: list[Response] = []
    page.on("response", lambda response: responses.append(response))
    with OpenAIServer([Reply(text="ok")], api_key=key) as model_server:
        open_dashboard(page, server.base_url)
        page.click("[data-tab=config]")
        form = page.locator("#model-form")
        expect(form).to_be_visible()

        # invalid input: each problem under its own field
        form.locator("[name=name]").fill("bad name!")
        form.locator("[name=provider]").select_option("openai_compatible")
        form.locator("[name=base_url]").fill("ftp://example")
        form.locator("button[type=submit]").click()
        expect(form.locator(".error[data-error-for='name']")).to_contain_text("letters, digits")
        assert _error(page, "#model-form", "model")
        assert "http" in _error(page, "#model-form", "base_url")

        # a valid connection, key typed once
        form.locator("[name=name]").fill("scripted")
        form.locator("[name=model]").fill("scripted-model")
        form.locator("[name=base_url]").fill(model_server.base_url)
        form.locator("[name=api_key]").fill(key)
        form.locator("[name=reasoning_effort]").select_option("low")
        form.locator("[name=max_output_tokens]").fill("256")
        form.locator("[name=context_window]").fill("64000")
        form.locator("button[type=submit]").click()
        expect(form.locator(".form-status")).to_contain_text("scripted")
        row = page.locator("tr[data-model='scripted']")
        expect(row).to_contain_text("key stored")
        assert form.locator("[name=api_key]").input_value() == ""

        # "test connection" reaches the real OpenAI-compatible server with the stored key
        row.locator("button.test").click()
        expect(row.locator(".test-result")).to_contain_text("answered", timeout=60_000)
        assert model_server.requests[-1].auth_ok is True

        # other forms refuse field by field too
        judger = page.locator("#judger-form")
        judger.locator("[name=quota_per_day]").fill("99")
        judger.locator("button[type=submit]").click()
        expect(judger.locator(".error[data-error-for='quota_per_day']")).to_contain_text("50")
        hosts = page.locator("#host-form")
        hosts.locator("[name=name]").fill("npu1")
        hosts.locator("[name=port]").fill("70000")
        hosts.locator("button[type=submit]").click()
        expect(hosts.locator(".error[data-error-for='port']")).not_to_be_empty()
        expect(hosts.locator(".error[data-error-for='address']")).not_to_be_empty()
        expect(hosts.locator(".error[data-error-for='user']")).not_to_be_empty()
        task = page.locator("#task-form")
        page.click("#add-team-row")
        task.locator("[name=mode]").select_option("single")
        page.click("#task-save")
        expect(task.locator(".error[data-error-for='teams']")).to_contain_text("one team")

        page.evaluate("() => window.scrollTo(0, 0)")
        screenshot(page, "configuration")

    # nothing the browser received carries the key: not a response, not the page
    assert key not in page.content()
    for response in responses:
        if "text/event-stream" in (response.headers.get("content-type") or ""):
            continue
        assert key.encode() not in response.body(), response.url
    for path in ("/api/config/models", "/api/config/workers", "/api/config/task", "/api/runs"):
        assert key not in api.get(path).text

    # stored: the preset in models.local.toml (naming no secret), the key encrypted with it
    local = tomllib.loads((lab_dir / "models.local.toml").read_text())
    preset = local["models"]["scripted"]
    assert "api_key_secret" not in preset
    assert preset["reasoning_effort"] == "low"
    assert preset["context_window"] == 64000  # what summarisation sizes the history by
    assert key not in (lab_dir / "models.local.toml").read_text()
    store = SecretsStore(lab_dir / "config")
    assert key not in store.data_file.read_text()
    stored = store.get("preset:scripted:api_key")
    assert stored is not None and stored.reveal() == key


def test_ssh_host_password_goes_to_the_secrets_store(
    server: RunningServer, api: httpx.Client, lab_dir: Path
) -> None:
    password = f"pw-{secrets.token_hex(12)}"
    answer = api.post(
        "/api/config/workers/hosts",
        json={"name": "npu9", "address": "10.9.9.9", "user": "lab", "password": password},
    )
    assert answer.status_code == 200, answer.text
    assert password not in answer.text
    text = (lab_dir / "hosts.toml").read_text()
    assert password not in text and 'password_secret = "ssh_npu9_password"' in text
    stored = SecretsStore(lab_dir / "config").get("ssh_npu9_password")
    assert stored is not None and stored.reveal() == password
    # remove it again: later tests start runs, and a runtime would try to reach this host
    assert api.delete("/api/config/workers/hosts/npu9").status_code == 200
    assert "npu9" not in (lab_dir / "hosts.toml").read_text()


def test_the_page_has_a_strict_content_security_policy_and_needs_a_session(
    server: RunningServer, api: httpx.Client
) -> None:
    assert httpx.get(f"{server.base_url}/").status_code == 401
    assert httpx.get(f"{server.base_url}/api/info").status_code == 401
    answer = api.get("/")
    assert answer.status_code == 200
    policy = answer.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "unsafe-inline" not in policy
    assert answer.headers["x-content-type-options"] == "nosniff"
