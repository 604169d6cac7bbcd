"""Deleting a local model preset (`DELETE /api/config/models/{name}`) on the real server: an
unknown one is 404; the offline preset, a shipped one (models.toml) and one a team of a live
run still uses are 409 with a code the page translates (the last saying which run and teams);
a foreign origin is refused like every other write; a deleted preset takes its stored key
with it. The Configuration page deletes on a second click."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from justkernel.lab import Lab
from justkernel.settings.secrets import SecretsStore
from tests.support.server import RunningServer
from tests.web.conftest import VIEWPORT, open_dashboard
from tests.web.synthetic import in_lab

KEY = "sk-jk-delete-me-0123456789"


def _save(api: httpx.Client, name: str) -> None:
    preset = {
        "name": name,
        "provider": "openai_compatible",
        "model": "m",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key": KEY,
    }
    answer = api.post("/api/config/models", json=preset)
    assert answer.status_code == 200, answer.text


def _local(lab_dir: Path) -> dict[str, Any]:
    path = lab_dir / "models.local.toml"
    return tomllib.loads(path.read_text())["models"] if path.is_file() else {}


def _key(lab_dir: Path, name: str) -> str | None:
    stored = SecretsStore(lab_dir / "config").get(f"preset:{name}:api_key")
    return stored.reveal() if stored is not None else None


def _use(lab_dir: Path, preset: str) -> dict[str, str]:
    """A live run with a team on `preset` and a team with a member on it, and one team that
    used it but exited."""

    async def arrange(lab: Lab) -> dict[str, str]:
        run = await lab.runs.create("uses a preset")
        workspaces = lab_dir / "data" / "workspaces"
        main = await lab.teams.register(
            run.id, model_preset=preset, model_label="Main", workspaces_dir=workspaces
        )
        member = await lab.teams.register(
            run.id,
            model_preset="offline",
            model_label="Member",
            workspaces_dir=workspaces,
            config={"member_models": {"reviewer": preset}},
        )
        gone = await lab.teams.register(
            run.id, model_preset=preset, model_label="Gone", workspaces_dir=workspaces
        )
        await lab.teams.set_status(run.id, gone.id, "exited")
        return {"run": run.id, "main": main.id, "member": member.id}

    return in_lab(lab_dir / "data", lab_dir / "config", arrange)


def _free(lab_dir: Path, run_id: str, *team_ids: str) -> None:
    async def leave(lab: Lab) -> None:
        for team_id in team_ids:
            await lab.teams.set_status(run_id, team_id, "exited")

    in_lab(lab_dir / "data", lab_dir / "config", leave)


def _refusal(answer: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["code"] == code, body
    return body  # type: ignore[no-any-return]


def test_deleting_a_preset_refuses_what_must_stay_and_takes_the_key(
    server: RunningServer, api: httpx.Client, lab_dir: Path
) -> None:
    url = "/api/config/models/{}".format
    _refusal(api.delete(url("no-such-preset")), 404, "no_such_preset")
    assert _refusal(api.delete(url("offline")), 409, "offline_preset")["params"] == {
        "name": "offline"
    }
    _refusal(api.delete(url("qwen")), 409, "shipped_preset")
    names = {m["name"] for m in api.get("/api/config/models").json()["models"]}
    assert {"offline", "qwen"} <= names  # nothing was deleted

    _save(api, "doomed")
    assert _key(lab_dir, "doomed") == KEY
    # a foreign page cannot delete it (the browser sends its Origin)
    foreign = api.delete(url("doomed"), headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403, foreign.text
    assert "doomed" in _local(lab_dir)

    # a team of a live run uses it, and a member model of another team: refused, saying which
    used = _use(lab_dir, "doomed")
    body = _refusal(api.delete(url("doomed")), 409, "preset_in_use")
    assert body["params"]["run"] == used["run"]
    assert body["params"]["teams"] == f"{used['main']}, {used['member']}"  # not the exited one
    assert body["params"]["runs"] == [{"run": used["run"], "teams": [used["main"], used["member"]]}]
    assert used["run"] in body["detail"] and used["main"] in body["detail"]
    assert KEY not in body["detail"]
    assert "doomed" in _local(lab_dir) and _key(lab_dir, "doomed") == KEY

    # once those teams left, it goes, and its stored key with it
    _free(lab_dir, used["run"], used["main"], used["member"])
    answer = api.delete(url("doomed"))
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"deleted": "doomed"}
    assert "doomed" not in _local(lab_dir)
    assert _key(lab_dir, "doomed") is None
    assert "doomed" not in {m["name"] for m in api.get("/api/config/models").json()["models"]}
    _refusal(api.delete(url("doomed")), 404, "no_such_preset")


def test_the_configuration_page_deletes_a_preset_on_a_second_click(
    page: Page,
    browser: Browser,
    signed_in: Any,
    server: RunningServer,
    api: httpx.Client,
    lab_dir: Path,
) -> None:
    _save(api, "page-doomed")
    _save(api, "page-kept")
    used = _use(lab_dir, "page-kept")
    open_dashboard(page, server.base_url)
    page.click("[data-tab=config]")
    row = page.locator("tr[data-model='page-doomed']")
    expect(row).to_be_visible()
    # shipped presets and the offline one have no Delete button
    for shipped in ("offline", "qwen"):
        expect(page.locator(f"tr[data-model='{shipped}'] button.delete")).to_have_count(0)

    button = row.locator("button.delete")
    expect(button).to_have_text("Delete")
    button.click()  # the first click only arms it
    expect(button).to_have_text("Click again to confirm")
    assert "page-doomed" in _local(lab_dir)
    button.click()
    expect(row).to_have_count(0)
    assert "page-doomed" not in _local(lab_dir) and _key(lab_dir, "page-doomed") is None

    # a preset a run still uses: the refusal in the row, in the page's language
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN", storage_state=signed_in)
    try:
        zh = context.new_page()
        open_dashboard(zh, server.base_url)
        zh.click("[data-tab=config]")
        kept = zh.locator("tr[data-model='page-kept']")
        kept.locator("button.delete").click()
        expect(kept.locator("button.delete")).to_have_text("再次点击以确认")
        kept.locator("button.delete").click()
        expect(kept.locator(".test-result")).to_have_text(
            f"page-kept 仍被运行 {used['run']} 的队伍 {used['main']}, {used['member']} 使用："
            "请先移除这些队伍。"
        )
        assert "page-kept" in _local(lab_dir)
    finally:
        context.close()
    _free(lab_dir, used["run"], used["main"], used["member"])
    assert api.delete("/api/config/models/page-kept").status_code == 200
