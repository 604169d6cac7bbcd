"""`POST /api/runs/{id}/providers/{provider}/resume` on the real `justkernel serve`: the
dashboard's button for a provider paused for auth or balance. Changes need the session and
the lab's own origin, like every other POST; a provider that is not paused is refused with a
reason; a paused one is resumed once, with the teams that waited for it."""

from __future__ import annotations

import asyncio

import httpx

from justkernel.core.events.runs import ProviderPaused, TeamPaused
from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from tests.support.server import folder_server
from tests.web.conftest import open_folder

PROVIDER = "openai_compatible"


async def _paused_run(settings: Settings) -> tuple[str, str]:
    """A live run whose one team waits for PROVIDER, as the scheduler leaves it after a 401."""
    lab = await open_lab(settings)
    try:
        run = await lab.runs.create("paused provider")
        team = await lab.teams.register(
            run.id,
            model_preset="offline",
            model_label="offline",
            workspaces_dir=settings.workspaces_dir,
        )
        # the words alone, as a log written before reason codes holds them
        reason = f"provider {PROVIDER} paused: the provider refused the API key (401)"
        await lab.events.append(run.id, ProviderPaused(provider=PROVIDER, kind="auth"))
        await lab.teams.set_status(run.id, team.id, "paused", reason)
        await lab.events.append(run.id, TeamPaused(reason=reason), team=team.id)
        return run.id, team.id
    finally:
        await lab.close()


def test_the_resume_button_route_resumes_a_paused_provider_once() -> None:
    folder = open_folder("jk-resume-")
    settings = Settings(data_dir=folder / "data", config_dir=folder / "config")
    run_id, team_id = asyncio.run(_paused_run(settings))
    with folder_server(folder) as server:
        signed = httpx.get(server.link, follow_redirects=False, timeout=30)
        assert signed.status_code == 303, signed.text
        url = f"/api/runs/{run_id}/providers/{PROVIDER}/resume"
        with httpx.Client(base_url=server.base_url, timeout=60) as anonymous:
            assert anonymous.post(url).status_code == 401  # no session, no change
        with httpx.Client(base_url=server.base_url, cookies=signed.cookies, timeout=60) as api:
            view = api.get(f"/api/runs/{run_id}/view").json()
            assert PROVIDER in view["paused_providers"]  # what shows the button
            (team,) = view["teams"]  # an old event's words arrive as their code
            assert team["status_reason_code"] == "provider_paused"
            assert team["status_reason_params"] == {
                "connection": PROVIDER,
                "message": "the provider refused the API key (401)",
            }
            foreign = api.post(url, headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403, foreign.text

            unknown = api.post(f"/api/runs/{run_id}/providers/deepseek/resume")
            assert unknown.status_code == 409
            assert "'deepseek' is not paused" in unknown.json()["detail"]

            resumed = api.post(url)
            assert resumed.status_code == 200, resumed.text
            assert resumed.json() == {"provider": PROVIDER, "resumed_teams": [team_id]}
            view = api.get(f"/api/runs/{run_id}/view").json()
            assert view["paused_providers"] == {}
            (team,) = [t for t in view["teams"] if t["id"] == team_id]
            assert team["status"] == "idle"
            events = api.get(f"/api/runs/{run_id}/events", params={"kind": "provider.resumed"})
            (event,) = events.json()["events"]
            assert event["payload"] == {
                "provider": PROVIDER,
                "connection": PROVIDER,
                "teams": [team_id],
            }

            again = api.post(url)
            assert again.status_code == 409, again.text
