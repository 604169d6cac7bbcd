"""`justkernel approvals` on a real SQLite lab, as a person in another terminal: list a waiting
card, approve it and remember, list and revoke the grant, reject another with a reason, show
and set modes; every decision reaches the desk's rows and the event log, and unknown ids, modes
and teams are clear errors."""

from __future__ import annotations

import asyncio
import json

from justkernel.agents.approval_desk import ApprovalDesk
from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from tests.support.cli import run_cli


async def _cli(settings: Settings, *args: str) -> tuple[int, str, str]:
    result = await asyncio.to_thread(run_cli, settings, *args, COLUMNS="200")
    return result.exit_code, result.stdout, result.stderr


async def test_approvals_commands_decide_remember_revoke_and_set_modes(
    settings: Settings,
) -> None:
    lab = await open_lab(settings)
    try:
        run = await lab.runs.create("cli approvals")
        team = await lab.teams.register(
            run.id,
            model_preset="offline",
            model_label="Offline",
            workspaces_dir=settings.workspaces_dir,
            config={},
        )
        desk = ApprovalDesk.of(lab)
        code, out, _ = await _cli(settings, "approvals", "mode", run.id, "ask", "--team", team.id)
        assert code == 0 and team.id in out and "ask" in out
        assert await desk.mode(run.id, team.id) == "ask"
        first = await desk.request(
            run.id, team.id, "simulate_kernel", {"mode": "full"}, "call-1", mode="ask"
        )
        second = await desk.request(
            run.id, team.id, "send_message", {"to": "all", "text": "hi"}, "call-2", mode="ask"
        )

        code, out, _ = await _cli(settings, "approvals", "list", run.id, "--json")
        assert code == 0
        cards = json.loads(out)
        assert [(c["id"], c["tool"], c["status"]) for c in cards] == [
            (first.id, "simulate_kernel", "pending"),
            (second.id, "send_message", "pending"),
        ]
        code, out, _ = await _cli(settings, "approvals", "list", run.id)
        assert code == 0 and first.id in out and "simulate_kernel (full)" in out

        code, out, _ = await _cli(
            settings, "approvals", "approve", run.id, first.id, "--remember", "--by", "ana"
        )
        assert code == 0 and "approved" in out and "remembered as grant-" in out
        code, out, _ = await _cli(
            settings, "approvals", "reject", run.id, second.id, "--reason", "not now"
        )
        assert code == 0 and "rejected" in out
        decided = await desk.get(second.id)
        assert (decided.status, decided.reason, decided.decided_by) == (
            "rejected",
            "not now",
            "cli",
        )
        # a second decision on the same card is refused, by the CLI's words
        code, _, err = await _cli(settings, "approvals", "reject", run.id, first.id)
        assert code == 2 and "approved already" in err

        code, out, _ = await _cli(settings, "approvals", "grants", run.id, "--json")
        (grant,) = json.loads(out)
        assert (grant["tool"], grant["kind"], grant["created_by"]) == (
            "simulate_kernel",
            "full",
            "ana",
        )
        code, out, _ = await _cli(settings, "approvals", "revoke", run.id, grant["id"])
        assert code == 0 and "revoked" in out
        assert await desk.grants(run.id) == []

        code, out, _ = await _cli(settings, "approvals", "mode", run.id, "read_only")
        assert code == 0
        code, out, _ = await _cli(settings, "approvals", "mode", run.id, "--json")
        assert json.loads(out) == {"run default": "read_only", team.id: "ask"}

        kinds = [e.kind for e in await lab.events.read(run.id) if e.kind.startswith("approval.")]
        assert kinds == [
            "approval.mode_changed",
            "approval.requested",
            "approval.requested",
            "approval.decided",
            "approval.grant_added",
            "approval.decided",
            "approval.grant_revoked",
            "approval.mode_changed",
        ]
    finally:
        await lab.close()


async def test_approvals_commands_name_what_they_do_not_know(settings: Settings) -> None:
    lab = await open_lab(settings)
    try:
        run = await lab.runs.create("cli approvals errors")
    finally:
        await lab.close()
    cases = [
        (("approve", run.id, "apr-unknown"), "no approval request 'apr-unknown'"),
        (("reject", run.id, "apr-unknown"), "no approval request 'apr-unknown'"),
        (("revoke", run.id, "grant-unknown"), "no grant 'grant-unknown'"),
        (("list", "run-unknown"), "no run with id"),
        (("mode", run.id, "sometimes"), "unknown approval mode 'sometimes'"),
        (("mode", run.id, "ask", "--team", "team-404"), "no team"),
        (("grants", run.id, "--team", "team-404"), "no team"),
    ]
    for args, message in cases:
        code, _, err = await _cli(settings, "approvals", *args)
        assert code == 2, (args, err)
        assert message in " ".join(err.split()), (args, err)
