"""Found by the HTTP fuzz on PostgreSQL: a NUL character in a run id or a query filter
(`/api/runs/a%00b`, `/api/runs/<run>/events?kind=a%00b` or `?team=%00`) reached the database,
which refuses NUL in text ("invalid byte sequence for encoding UTF8: 0x00"), and the API
answered 500. No id, kind or team of the lab holds a NUL: the URL is refused with 400 before
any handler runs, on every store."""

from __future__ import annotations

import httpx

from justkernel.lab import Lab
from justkernel.web.app import create_app
from justkernel.web.auth import AuthState

TOKEN = "nul-test-token-" + "n" * 24


async def test_a_nul_in_the_url_is_a_400_on_every_store(lab: Lab) -> None:
    run = await lab.runs.create("nul")
    await lab.events.append(run.id, "run.note", {"text": "x"}, team="team-001")
    auth = AuthState.create(
        lab.settings.config_dir, lab.settings.resolved_data_dir, api_token=TOKEN
    )
    transport = httpx.ASGITransport(app=create_app(lab, auth))
    headers = {"authorization": f"Bearer {TOKEN}"}
    urls = [
        "/api/runs/a%00b",
        "/api/runs/a%00b/view",
        f"/api/runs/{run.id}/events?kind=a%00b",
        f"/api/runs/{run.id}/events?team=%00",
        f"/api/runs/{run.id}/teams/%00/plan",
        f"/api/runs/{run.id}/report.md?x=%00",
    ]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:4173") as http:
        for url in urls:
            answer = await http.get(url, headers=headers)
            assert answer.status_code == 400, (url, answer.status_code, answer.text[:200])
            assert "NUL" in answer.json()["detail"], answer.text
        clean = await http.get(f"/api/runs/{run.id}/events?kind=run.note", headers=headers)
        assert clean.status_code == 200 and len(clean.json()["events"]) == 1, clean.text
