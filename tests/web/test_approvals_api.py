"""Approval cards over HTTP (issue #17, 4) through the real `justkernel serve`: a run's pending
cards, approve / reject / approve-and-remember, the remembered grant listed and revoked, a
team's mode read and set; unknown ids are 404 and a second decision 409, each with a code the
page translates; no session or a foreign origin changes nothing; the model's arguments come
back as data. Decisions made here are recorded `by: "dashboard"`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from justkernel.agents.approval_desk import ApprovalDesk
from justkernel.core.approvals import ApprovalMode
from justkernel.lab import Lab
from tests.support.server import RunningServer
from tests.web.synthetic import in_lab

HOSTILE = "<img src=x onerror=\"document.title='owned'\">"


async def _arrange(lab: Lab, settings_dir: Any) -> dict[str, str]:
    run = await lab.runs.create("approvals api")
    team = await lab.teams.register(
        run.id, model_preset="offline", model_label="Offline", workspaces_dir=settings_dir
    )
    desk = ApprovalDesk.of(lab)
    await desk.set_mode(run.id, team.id, ApprovalMode.ASK, by="test")
    full = await desk.request(
        run.id, team.id, "simulate_kernel", {"mode": "full"}, "c1", mode="ask"
    )
    share = await desk.request(
        run.id, team.id, "send_message", {"to": "all", "text": HOSTILE}, "c2", mode="ask"
    )
    return {"run": run.id, "team": team.id, "full": full.id, "share": share.id}


@pytest.fixture(scope="module")
def cards(server: RunningServer, lab_dir: Any) -> dict[str, str]:
    data, config = lab_dir / "data", lab_dir / "config"
    return in_lab(data, config, lambda lab: _arrange(lab, data / "workspaces"))


def _origin(server: RunningServer) -> dict[str, str]:
    return {"Origin": server.base_url}


def test_cards_are_listed_decided_remembered_and_revoked(
    api: httpx.Client, server: RunningServer, cards: dict[str, str]
) -> None:
    base = f"/api/runs/{cards['run']}/approvals"
    listed = api.get(base).json()["approvals"]
    assert [(c["id"], c["tool"], c["status"]) for c in listed] == [
        (cards["full"], "simulate_kernel", "pending"),
        (cards["share"], "send_message", "pending"),
    ]
    assert listed[1]["args"]["text"] == HOSTILE  # data, exactly as the model sent it

    remembered = api.post(
        f"{base}/{cards['full']}/decide", json={"decision": "remember"}, headers=_origin(server)
    )
    assert remembered.status_code == 200, remembered.text
    assert remembered.json()["approval"]["status"] == "approved"
    assert remembered.json()["approval"]["decided_by"] == "dashboard"
    grants = api.get(f"{base}/grants").json()["grants"]
    assert [(g["team_id"], g["tool"]) for g in grants] == [(cards["team"], "simulate_kernel")]

    rejected = api.post(
        f"{base}/{cards['share']}/decide",
        json={"decision": "reject", "reason": "no sharing yet"},
        headers=_origin(server),
    )
    assert rejected.status_code == 200 and rejected.json()["approval"]["status"] == "rejected"
    again = api.post(
        f"{base}/{cards['share']}/decide", json={"decision": "approve"}, headers=_origin(server)
    )
    assert again.status_code == 409 and again.json()["code"] == "already_decided"
    assert again.json()["params"] == {
        "id": cards["share"],
        "decided": "rejected",
        "by": "dashboard",
    }
    assert api.get(base).json()["approvals"] == []

    grant = grants[0]["id"]
    assert api.delete(f"{base}/grants/{grant}", headers=_origin(server)).status_code == 200
    assert api.get(f"{base}/grants").json()["grants"] == []
    gone = api.delete(f"{base}/grants/{grant}", headers=_origin(server))
    assert gone.status_code == 404 and gone.json()["code"] == "unknown_grant"

    kinds = api.get(f"/api/runs/{cards['run']}/events", params={"kind": "approval.decided"})
    decided = [e["payload"] for e in kinds.json()["events"]]
    assert sorted(p["decision"] for p in decided) == ["approved", "rejected"]
    assert {p["by"] for p in decided} == {"dashboard"}


def test_modes_are_read_and_set_per_team(
    api: httpx.Client, server: RunningServer, cards: dict[str, str]
) -> None:
    url = f"/api/runs/{cards['run']}/teams/{cards['team']}/approval-mode"
    assert api.get(url).json()["mode"] == "ask"
    put = api.put(url, json={"mode": "read_only"}, headers=_origin(server))
    assert put.status_code == 200 and put.json()["mode"] == "read_only"
    assert api.get(url).json()["mode"] == "read_only"
    modes = api.get(f"/api/runs/{cards['run']}/approvals/modes").json()
    assert modes["modes"] == {cards["team"]: "read_only"}
    assert modes["choices"] == ["read_only", "ask", "auto"]
    bad = api.put(url, json={"mode": "yolo"}, headers=_origin(server))
    assert bad.status_code == 400
    stranger = f"/api/runs/{cards['run']}/teams/team-999/approval-mode"
    missing = api.put(stranger, json={"mode": "auto"}, headers=_origin(server))
    assert missing.status_code == 404 and missing.json()["code"] == "unknown_team"


def test_unknown_ids_bad_bodies_and_strangers_change_nothing(
    api: httpx.Client, server: RunningServer, cards: dict[str, str]
) -> None:
    base = f"/api/runs/{cards['run']}/approvals"
    unknown = api.post(
        f"{base}/apr-0000/decide", json={"decision": "approve"}, headers=_origin(server)
    )
    assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_approval"
    extra = api.post(
        f"{base}/apr-0000/decide", json={"decision": "approve", "x": 1}, headers=_origin(server)
    )
    assert extra.status_code == 400
    with httpx.Client(base_url=server.base_url, timeout=30) as anonymous:
        assert anonymous.get(base).status_code in (401, 403)
        no_session = anonymous.put(
            f"/api/runs/{cards['run']}/teams/{cards['team']}/approval-mode",
            json={"mode": "auto"},
            headers=_origin(server),
        )
        assert no_session.status_code in (401, 403)
    foreign = api.put(
        f"/api/runs/{cards['run']}/teams/{cards['team']}/approval-mode",
        json={"mode": "auto"},
        headers={"Origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    url = f"/api/runs/{cards['run']}/teams/{cards['team']}/approval-mode"
    assert api.get(url).json()["mode"] != "auto"
