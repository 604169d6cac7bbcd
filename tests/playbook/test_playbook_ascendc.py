"""The Ascend C playbook: every step is a complete, correct msopgen project measured by the real
`ascendc-cpu` toolchain (15 local cases, 3 perf cases), each `faster` step beats what it builds
on, seeds know different steps, and a team that lacks a step reaches the later ones only by
adopting another team's candidate (the offline model driven with scripted tool results)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from justkernel.agents.offline import PlaybookDriver
from justkernel.agents.playbook import Playbook, load_playbook
from justkernel.core.receipts import Status
from justkernel.operators import load_operator
from tests.playbook.ascendc_support import BASELINE, LOCAL_CASES, full_jobs, playbook, projects
from tests.toolchains.ascendc_cpu.ladder_support import PERF_CASES, Ran

pytestmark = pytest.mark.timeout(600)

_jobs: dict[str, Ran] = {}


async def every_step() -> dict[str, Ran]:
    """The baseline and every step's full job, once per test process (two at a time)."""
    if not _jobs:
        _jobs.update(await full_jobs(projects(playbook())))
    return _jobs


def test_the_playbook_loads_with_the_ascendc_projects_baseline() -> None:
    pb = playbook()
    assert pb.target == "ascendc"
    project = load_operator().ascendc_target().project_dir
    assert sorted(pb.baseline_files) == [
        "op_host/confusion_mul_grad.cpp",
        "op_host/confusion_mul_grad_tiling.h",
        "op_kernel/confusion_mul_grad.cpp",
    ]
    for rel, text in pb.baseline_files.items():
        assert text == (project / rel).read_text(encoding="utf-8")
    for step in pb.steps.values():
        assert set(step.files) == set(pb.baseline_files), step.id
        assert step.builds_on == BASELINE or step.builds_on in pb.steps, step.id
    assert all(len(choices) >= 2 for choices in pb.sequence)  # every position has alternatives
    assert any(share < 1.0 for share in pb.known_by)
    # the C port's playbook is still its own file, known to every seed
    cpu = load_playbook()
    assert cpu.target == "cpu" and set(cpu.known_by) == {1.0}
    assert "op_kernel/cmg_kernel.c" in cpu.baseline_files
    assert cpu.positions(7) == cpu.route(7)


def test_seeds_take_different_routes_and_know_different_steps() -> None:
    pb = playbook()
    routes = {seed: tuple(s.id if s else None for s in pb.positions(seed)) for seed in range(1, 9)}
    assert len(set(routes.values())) >= 6, routes
    known = {seed: frozenset(n for n, step in enumerate(r) if step) for seed, r in routes.items()}
    assert len(set(known.values())) >= 4, known  # different subsets of the ladder
    assert any(len(k) < len(pb.sequence) for k in known.values()), known
    for seed in range(1, 9):  # seeded: the same seed always takes the same route
        assert pb.positions(seed) == pb.positions(seed)
        assert pb.route(seed) == [s for s in pb.positions(seed) if s is not None]


async def test_every_step_passes_all_local_cases_and_beats_what_it_builds_on() -> None:
    runs = await every_step()
    pb = playbook()
    totals: dict[str, int] = {}
    for name, ran in runs.items():
        r = ran.receipt
        assert r.status is Status.MEASURED, (name, r.status, r.detail)
        assert [c.case_id for c in r.cases] == list(LOCAL_CASES), name
        assert all(c.passed for c in r.cases), (name, r.failing_cases())
        assert [c.case_id for c in r.cycles] == list(PERF_CASES), name
        assert all(c.check.passed for c in r.cycles), name
        assert r.total_est_cycles is not None
        totals[name] = r.total_est_cycles
    table = "\n".join(f"{n:<32}{t:>14,}" for n, t in totals.items())
    print("\nmodelled cycles, sum over the perf cases\n" + table)
    for step in pb.steps.values():
        if step.expected == "faster":
            assert totals[step.id] < totals[step.builds_on], (step.id, "\n" + table)
    # the ladder as a whole: the last main step is more than 40x below the template
    last = pb.sequence[-1][0]
    assert totals[last] * 40 < totals[BASELINE], table
    # multi-core steps run on every vector core, the one-core template on one
    blocks = {
        name: {c.pipeline.block_dim for c in ran.receipt.cycles if c.pipeline is not None}
        for name, ran in runs.items()
    }
    assert blocks[BASELINE] == {1}
    assert blocks["s5_split_reductions"] == {40}


# -- the offline model on the Ascend C playbook, with scripted tool results ---------------------


class Bench:
    """Answers a team's tool calls like the lab would, with cycles read off which step's files
    the workspace holds (no toolchain: this is about the route the model takes)."""

    def __init__(
        self, pb: Playbook, public: dict[str, str] | None = None, visible_after: int = 0
    ) -> None:
        self.pb = pb
        self.files = dict(pb.baseline_files)
        order = [BASELINE, *(choices[0] for choices in pb.sequence)]
        self.cycles = {name: 1_000_000 >> (2 * i) for i, name in enumerate(order)}
        for choices in pb.sequence:  # an alternative measures like its main step, plus 1
            for alt in choices[1:]:
                self.cycles[alt] = self.cycles[choices[0]] + 1
        self.public = public or {}  # candidate id -> step whose files it holds
        self.visible_after = visible_after  # shared once the team has measured this many
        self.written: list[str] = []  # steps whose files the team wrote, in order

    def holding(self) -> str:
        for name, step in self.pb.steps.items():
            if step.files == self.files:
                return name
        assert self.files == self.pb.baseline_files
        return BASELINE

    def answer(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "write_file":
            self.files[args["file_path"].lstrip("/")] = args["content"]
            return {"ok": True}
        if name == "compile_kernel":
            return {"ok": True}
        if name == "simulate_kernel" and args["mode"] == "probe":
            return {"status": "probe_passed"}
        if name == "simulate_kernel":
            held = self.holding()
            if not self.written or self.written[-1] != held:
                self.written.append(held)
            return {"status": "measured", "total_est_cycles": self.cycles[held], "receipt_id": "r"}
        if name == "read_public_candidates":
            if len(self.written) < self.visible_after:
                return {"candidates": []}
            rows = [
                {"candidate_id": cid, "total_est_cycles": self.cycles[step]}
                for cid, step in self.public.items()
            ]
            return {"candidates": rows}
        if name == "fetch_candidate_source":
            step = self.public[args["candidate_id"]]
            return {
                "candidate_id": args["candidate_id"],
                "total_est_cycles": self.cycles[step],
                "files": dict(self.pb.steps[step].files),
            }
        return {}


def play(pb: Playbook, seed: int, bench: Bench, turns: int = 60) -> list[BaseMessage]:
    """Runs the driver turn after turn (a turn ends with a message without tool calls; a team
    that said it is done is woken again, as news would) until its playbook is complete."""
    driver = PlaybookDriver(pb, seed)
    messages: list[BaseMessage] = [HumanMessage(content="start")]
    for _ in range(turns * 20):
        message = driver.next_message(messages)
        messages.append(message)
        if not message.tool_calls:
            if "Playbook complete" in str(message.content):
                return messages
            messages.append(HumanMessage(content="Continue"))
            continue
        for call in message.tool_calls:
            result = bench.answer(call["name"], call["args"])
            messages.append(ToolMessage(content=json.dumps(result), tool_call_id=call["id"]))
    raise AssertionError("the team never finished")


def a_seed_with_a_gap(pb: Playbook) -> tuple[int, int]:
    """A seed that lacks a step but knows a later one, and the gap's position."""
    for seed in range(1, 100):
        positions = pb.positions(seed)
        for n, step in enumerate(positions):
            if step is None and any(s is not None for s in positions[n + 1 :]):
                return seed, n
    raise AssertionError("no seed with a gap")


def test_a_team_without_a_step_plays_the_later_ones_only_after_adopting() -> None:
    pb = playbook()
    seed, gap = a_seed_with_a_gap(pb)
    positions = pb.positions(seed)
    later = [s.id for s in positions[gap + 1 :] if s is not None]
    before = [s.id for s in positions[:gap] if s is not None]

    alone = Bench(pb)
    play(pb, seed, alone)
    assert alone.written[: len(before) + 1] == [BASELINE, *before]
    assert not set(later) & set(alone.written), alone.written  # nothing to build them on

    # another team shares a candidate holding the missing step (the gap's main step)
    missing = pb.sequence[gap][0]
    shared = Bench(pb, public={"cand-other": missing})
    play(pb, seed, shared)
    assert missing in shared.written  # adopted ...
    assert later[0] in shared.written  # ... and its own next idea played on top of it
    assert shared.written.index(missing) < shared.written.index(later[0])


def test_a_team_that_lacks_a_step_adopts_what_is_shared_after_its_own_steps() -> None:
    """Out of steps it can play, it waits for news instead of finishing, so a candidate shared
    only after everything it could measure on its own still reaches it."""
    pb = playbook()
    seed, _gap = a_seed_with_a_gap(pb)
    alone = Bench(pb)
    play(pb, seed, alone)  # what it measures on its own
    best = pb.sequence[-1][0]  # the ladder's last main step: better than anything the team has
    late = Bench(pb, public={"cand-late": best}, visible_after=len(alone.written))
    messages = play(pb, seed, late)
    assert late.written[: len(alone.written)] == alone.written
    assert best in late.written[len(alone.written) :], late.written
    assert f"{late.cycles[best]:,}" in str(messages[-1].content)  # "Best kept: ..."
