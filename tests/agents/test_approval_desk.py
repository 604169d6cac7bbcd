"""Approval modes' rules (`core.approvals`) and the desk on a real database: which calls ask in
each mode (MCP tools included), grants that cover a tool (of a kind), every decision and mode
change an event, a decision taken once, clear errors for unknown ids."""

from __future__ import annotations

import pytest

from justkernel.agents.approval_desk import ApprovalDesk, ApprovalRefused, UnknownApproval
from justkernel.core.approvals import (
    ApprovalMode,
    GrantKey,
    card_args,
    covered,
    needs_approval,
    parse_mode,
)
from justkernel.lab import Lab

READS = ["read_file", "ls", "grep", "glob", "write_todos", "record_experiment_plan",
         "compile_kernel", "read_simulation_results", "list_local_cases", "read_inbox",
         "read_public_candidates", "fetch_candidate_source", "task"]  # fmt: skip
FULL = {"mode": "full"}
PROBE = {"mode": "probe", "case_ids": ["c1"]}


def test_auto_never_asks() -> None:
    for tool in [*READS, "write_file", "edit_file", "send_message", "mcp_docs_search"]:
        assert not needs_approval(ApprovalMode.AUTO, tool, {})
    assert not needs_approval("auto", "simulate_kernel", FULL)


def test_ask_asks_for_full_simulations_shares_and_mcp_tools() -> None:
    ask = ApprovalMode.ASK
    assert needs_approval(ask, "simulate_kernel", FULL)
    assert needs_approval(ask, "simulate_kernel", {})  # the tool's default mode is full
    assert not needs_approval(ask, "simulate_kernel", PROBE)
    assert needs_approval(ask, "send_message", {"to": "all", "text": "hi"})
    assert needs_approval(ask, "record_experience", {})
    assert needs_approval(ask, "mcp_docs_search", {"q": "DataCopy"})
    # a server that says its tools need no approval is believed in ask mode only
    assert not needs_approval(ask, "mcp_docs_search", {}, declared=False)
    for tool in [*READS, "write_file", "edit_file"]:
        assert not needs_approval(ask, tool, {}), tool


def test_read_only_asks_for_every_write_simulation_share_and_mcp_tool() -> None:
    ro = ApprovalMode.READ_ONLY
    for tool in ["write_file", "edit_file", "send_message", "record_experience"]:
        assert needs_approval(ro, tool, {"file_path": "/op_kernel/x.cpp"}), tool
    assert needs_approval(ro, "simulate_kernel", FULL)
    assert needs_approval(ro, "mcp_docs_search", {}, declared=False)
    assert not needs_approval(ro, "simulate_kernel", PROBE)  # probes and compiles pass
    for tool in READS:
        assert not needs_approval(ro, tool, {}), tool


def test_a_grant_covers_its_team_and_tool_and_kind_only() -> None:
    full_only = GrantKey("team-001", "simulate_kernel", "full")
    assert covered([full_only], "team-001", "simulate_kernel", FULL)
    assert not covered([full_only], "team-002", "simulate_kernel", FULL)
    assert not covered([full_only], "team-001", "simulate_kernel", PROBE)
    assert not covered([full_only], "team-001", "send_message", {})
    assert covered([GrantKey("team-001", "send_message")], "team-001", "send_message", {"x": 1})
    with pytest.raises(ValueError, match="read_only, ask, auto"):
        parse_mode("sometimes")


def test_card_args_are_scrubbed_and_clipped() -> None:
    shown = card_args(
        {"content": "x" * 5000, "key": "sk-secret-value", "n": 3},
        scrub=lambda t: t.replace("sk-secret-value", "***"),
    )
    assert shown["key"] == "***" and shown["n"] == 3
    assert shown["content"].startswith("x" * 2000) and "3000 more chars" in shown["content"]
    huge = card_args({f"k{i}": "y" * 1500 for i in range(20)})
    assert list(huge) == ["_clipped"] and len(huge["_clipped"]) <= 8001


async def _kinds(lab: Lab, run_id: str) -> list[str]:
    return [e.kind for e in await lab.events.read(run_id) if e.kind.startswith("approval.")]


async def test_the_desk_asks_decides_once_remembers_and_revokes(lab: Lab) -> None:
    run = await lab.runs.create("desk")
    desk = ApprovalDesk.of(lab)
    assert await desk.check(run.id, "team-001", "simulate_kernel", FULL) is None  # auto
    await desk.set_mode(run.id, "team-001", "ask", by="ana")
    assert await desk.mode(run.id, "team-001") is ApprovalMode.ASK
    assert await desk.mode(run.id, "team-002") is ApprovalMode.AUTO
    assert await desk.check(run.id, "team-001", "simulate_kernel", FULL) is ApprovalMode.ASK
    assert await desk.check(run.id, "team-001", "simulate_kernel", PROBE) is None

    card = await desk.request(
        run.id, "team-001", "simulate_kernel", FULL, "call-1", mode=ApprovalMode.ASK
    )
    again = await desk.request(
        run.id, "team-001", "simulate_kernel", FULL, "call-1", mode=ApprovalMode.ASK
    )
    assert again.id == card.id and [r.id for r in await desk.pending(run.id)] == [card.id]
    with pytest.raises(ApprovalRefused, match="only an approval"):
        await desk.decide(card.id, approve=False, remember=True, by="ana")
    decided = await desk.decide(card.id, approve=True, remember=True, by="ana", reason="go")
    assert decided.status == "approved" and decided.grant_id
    with pytest.raises(ApprovalRefused, match="approved already"):
        await desk.decide(card.id, approve=False, by="bo")
    with pytest.raises(UnknownApproval, match="apr-nope"):
        await desk.decide("apr-nope", approve=True, by="ana")
    # remembered: the next identical call passes, another kind of call still asks
    assert await desk.check(run.id, "team-001", "simulate_kernel", FULL) is None
    assert await desk.check(run.id, "team-001", "send_message", {}) is ApprovalMode.ASK
    (grant,) = await desk.grants(run.id, "team-001")
    assert (grant.tool, grant.kind, grant.request_id) == ("simulate_kernel", "full", card.id)
    await desk.revoke(grant.id, by="ana")
    assert await desk.check(run.id, "team-001", "simulate_kernel", FULL) is ApprovalMode.ASK
    with pytest.raises(UnknownApproval):
        await desk.revoke(grant.id, by="ana")
    assert await _kinds(lab, run.id) == [
        "approval.mode_changed",
        "approval.requested",
        "approval.decided",
        "approval.grant_added",
        "approval.grant_revoked",
    ]
    decided_event = [e for e in await lab.events.read(run.id) if e.kind == "approval.decided"]
    assert decided_event[0].typed().model_dump(exclude_none=True) == {
        "request_id": card.id,
        "tool": "simulate_kernel",
        "kind": "full",
        "decision": "approved",
        "by": "ana",
        "reason": "go",
        "remember": True,
        "grant_id": grant.id,
    }


async def test_a_mode_set_elsewhere_counts_after_a_refresh(lab: Lab) -> None:
    """The middleware's desk caches modes; a change from another process (another desk)
    reaches it at its next refresh, which the scheduler runs every dispatch pass."""
    run = await lab.runs.create("desk cache")
    ours, theirs = ApprovalDesk.of(lab), ApprovalDesk.of(lab)
    assert await ours.check(run.id, "team-001", "write_file", {}) is None
    await theirs.set_mode(run.id, None, ApprovalMode.READ_ONLY, by="cli")  # the run's default
    assert await ours.check(run.id, "team-001", "write_file", {}) is None  # cached
    await ours.refresh(run.id)
    assert await ours.check(run.id, "team-001", "write_file", {}) is ApprovalMode.READ_ONLY


async def test_a_grant_given_up_front_lets_the_calls_through(lab: Lab) -> None:
    run = await lab.runs.create("desk grant")
    desk = ApprovalDesk.of(lab)
    await desk.set_mode(run.id, "team-001", ApprovalMode.ASK, by="ana")
    grant = await desk.add_grant(run.id, "team-001", "send_message", by="ana")
    assert grant.request_id is None and grant.kind is None
    assert await desk.check(run.id, "team-001", "send_message", {"to": "all"}) is None
    assert await desk.check(run.id, "team-002", "send_message", {}) is None  # auto
    assert await desk.check(run.id, "team-001", "record_experience", {}) is ApprovalMode.ASK
