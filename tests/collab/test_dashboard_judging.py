"""The dashboard's Judger controls drive the running Judger of the real server: settings saved
through the API are refused field by field or applied on the Judger's next pass, a run started
from the dashboard judges beside its team (the local judge started on demand), its nomination
waits for the dashboard's approval, the approved candidate is submitted and its official
result logged, and the judge the server started stops with the server."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.support.judge import judge_dir_at
from tests.support.labs import open_folder
from tests.support.server import assert_gone, running_server

TOKEN = "dashboard-judging-token-0123456789abcdef"
TIMEOUT = 600.0


def _until(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(1.0)
    raise AssertionError(f"timed out waiting for {what}")


def test_the_dashboard_approves_what_the_running_judger_nominated() -> None:
    folder = open_folder("jk-dash-judging-")
    # the session judges' seed and points: their evaluation folder (inputs, receipts) is shared
    judge_dir = judge_dir_at(folder / "config" / "judge")
    with running_server(
        folder / "data",
        folder / "config",
        JUSTKERNEL_API_TOKEN=TOKEN,
        JUSTKERNEL_MODELS_LOCAL_FILE=str(folder / "models.local.toml"),
        JUSTKERNEL_HOSTS_FILE=str(folder / "hosts.toml"),
        JUSTKERNEL_LOG_LEVEL="warning",
    ) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as api:
            refused = api.put("/api/config/judger", json={"model": "offline", "quota_per_day": 99})
            assert refused.status_code == 400
            assert set(refused.json()["errors"]) == {"quota_per_day"}  # fields first
            refused = api.put("/api/config/judger", json={"model": "offline"})
            assert "offline playbook" in refused.json()["errors"]["model"]
            saved = api.put("/api/config/judger", json={"human_approval": True})
            assert saved.status_code == 200, saved.text
            on_disk = json.loads((folder / "data" / "judger.json").read_text())
            assert on_disk["human_approval"] is True

            started = api.post(
                "/api/task/start",
                json={"name": "judging", "mode": "single", "teams": [{"model": "offline"}]},
            )
            assert started.status_code == 200, started.text
            run_id = started.json()["run"]["id"]

            def events(kind: str) -> list[dict[str, Any]]:
                page = api.get(f"/api/runs/{run_id}/events", params={"kind": kind, "limit": 500})
                return [e["payload"] for e in page.json()["events"]]

            def awaiting() -> str | None:
                rows = api.get(f"/api/runs/{run_id}/judger").json()["candidates"]
                waiting = [c for c in rows if (c.get("nomination") or {}).get("awaiting_approval")]
                return waiting[0]["candidate_id"] if waiting else None

            candidate = _until("a nomination awaiting approval", awaiting)
            judge = json.loads((judge_dir / "server.json").read_text())  # started on demand
            assert events("judger.submission") == []  # nothing goes before a human

            approved = api.post(f"/api/runs/{run_id}/candidates/{candidate}/approve")
            assert approved.status_code == 200, approved.text
            assert approved.json()["event"]["payload"]["by"] == "dashboard"
            again = api.post(f"/api/runs/{run_id}/candidates/{candidate}/reject")
            assert again.status_code == 409

            result = _until(
                "the official result of the approved candidate",
                lambda: [r for r in events("official.result") if r["candidate_id"] == candidate],
            )[0]
            assert result["backend"] == "local" and len(result["points"]) == 15
            submitted = [s["candidate_id"] for s in events("judger.submission")]
            assert submitted == [candidate]
            settings = api.get(f"/api/runs/{run_id}/judger").json()["settings"]
            assert settings["human_approval"] is True
            paused = api.post(f"/api/runs/{run_id}/pause")
            assert paused.status_code == 200, paused.text
    assert not (judge_dir / "server.json").exists()  # the server stopped the judge it started
    assert_gone(judge["pid"], "the local judge the server started")
