"""The whole loop with a competent model (issue #15, Must show 2): a scripted model on the
OpenAI-compatible stand-in, deriving each step from what the lab's tools answer
(`tests/support/competent_model.py`), improves the Ascend C kernel through the real harness,
tools, scheduler and `ascendc-cpu` toolchain on the lab's default target; its measured source is
frozen, reviewed by the Judger, submitted to a real local judge, and the official per-point
result reaches the team's inbox, where the woken model reads it before it says [done]."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from justkernel.app import LabRuntime, open_runtime
from justkernel.core.reasons import ReasonCode
from justkernel.core.receipts import Receipt
from justkernel.judger.settings import JudgerSettings
from justkernel.paths import resources_dir
from justkernel.settings.config import Settings
from tests.support.competent_model import DONE, CompetentModel
from tests.support.default_target import start_on_default_target
from tests.support.judge import judge_in_thread, new_judge_dir, seed_judge_artefacts
from tests.support.labs import open_folder, scripted_preset
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.timeout(600)
KEY = "sk-competent-model-test-4242"
STEP = "s6_dtype_ub_plans"  # the playbook's best measured overlay (12.39M -> 243,403 cycles)
MARKER = "test_competent_model: a source no other test submits"
RUN_SECONDS = 480.0  # a bound, not a goal: the run ends when the team is done and judged


def seed_judge(runtime: LabRuntime, judge_dir: Path) -> None:
    """The test judge's ascendc-cpu artefacts copied from the lab's per-user cache (our own
    harness main and precompiled headers, built once by `RunSession.prepare`), so the judge
    does not build them again (~12 CPU-s)."""
    toolchain = runtime.target("ascendc-cpu").toolchain
    built = runtime.lab.settings.toolchains_dir / "ascendc-cpu" / toolchain.version
    seed_judge_artefacts(built, judge_dir, toolchain.id)


@contextmanager
def judger_settings(runtime: LabRuntime) -> Iterator[None]:
    """The lab's shared `judger.json` (the data folder is the session's) set to the defaults
    this walk relies on (rules review, the verified strategy, no human approval) with a short
    poll, and put back as it was afterwards."""
    shared = runtime.judger_settings
    before = shared.path.read_bytes() if shared.path.exists() else None
    shared.save(JudgerSettings(poll_seconds=0.5))
    try:
        yield
    finally:
        if before is None:
            shared.path.unlink(missing_ok=True)
        else:
            shared.path.write_bytes(before)


async def _events(runtime: LabRuntime, run_id: str, kind: str) -> list[dict[str, Any]]:
    return [e.payload async for e in runtime.lab.events.iter_all(run_id) if e.kind == kind]


async def test_a_competent_model_improves_the_kernel_and_reads_its_official_result(
    monkeypatch: pytest.MonkeyPatch, shared_lab_dir: Path, tmp_path: Path
) -> None:
    monkeypatch.delenv("JUSTKERNEL_TOOLCHAIN")  # the lab's default target of the day
    overlay = resources_dir() / "playbook" / "confusion_mul_grad" / "ascendc" / "steps" / STEP
    model = CompetentModel(overlay, MARKER)
    judge_dir = new_judge_dir(open_folder("jk-competent-"))
    with judge_in_thread(judge_dir) as judge_url:
        # the lab reaches it as it reaches a local judge already serving (JUSTKERNEL_JUDGE_URL)
        settings = Settings(
            data_dir=shared_lab_dir / "data",
            config_dir=tmp_path / "config",
            judge="local",
            judge_dir=judge_dir,
            judge_url=judge_url,
        )
        async with (
            open_runtime(settings, slots=2) as runtime,
            OpenAIServer(model, api_key=KEY, check_tool_history=True) as server,
        ):
            runtime.lab.secrets.set("scripted_key", KEY)
            runtime.presets["scripted"] = scripted_preset(server.base_url)
            session = await start_on_default_target(runtime, "competent model", "scripted")
            await session.prepare()  # the one-time build, then the judge shares it
            seed_judge(runtime, judge_dir)
            with judger_settings(runtime):
                assert await session.open_judger(judge_required=True) is not None
                reason = await session.drive(RUN_SECONDS, summarise_stop=True)
            await _walked(runtime, session.run_id, reason, model, server)


async def _walked(
    runtime: LabRuntime, run_id: str, reason: str, model: CompetentModel, server: OpenAIServer
) -> None:
    """What the walk must have left in the lab's records and the model's view."""
    assert server.handler_errors == [], server.handler_errors
    assert reason.code == ReasonCode.NO_WORK, reason
    [team] = await runtime.lab.teams.list(run_id)
    assert team.status == "done", (team.status, team.status_reason)

    # the model measured the baseline, then an improvement with every local case passing
    baseline, improved = await runtime.lab.experiments.list(run_id)
    assert baseline.status == improved.status == "measured"
    assert baseline.cycles_sum is not None and improved.cycles_sum is not None
    assert improved.cycles_sum < baseline.cycles_sum / 10, (improved, baseline)
    receipts = runtime.lab.settings.resolved_data_dir / "receipts"
    receipt = Receipt.model_validate_json((receipts / f"{improved.receipt_key}.json").read_text())
    assert receipt.executor.toolchain_id == "ascendc-cpu"
    assert len(receipt.cases) == 15 and all(c.passed for c in receipt.cases)
    assert receipt.total_est_cycles == improved.cycles_sum
    assert improved.plan["case_ids"] == model.probe_cases  # the plan named its probe

    # it reacted to what the tools answered: a compile error fixed, then a clean build
    assert model.seen.compile_errors and "DataCopyy" in model.seen.compile_errors[0]
    results = await _events(runtime, run_id, "tool.result")
    compiles = [json.loads(r["content"]) for r in results if r["name"] == "compile_kernel"]
    assert [c["ok"] for c in compiles] == [False, True], compiles
    probes = [r for r in results if r["name"] == "simulate_kernel" and "probe" in r["content"]]
    assert probes and json.loads(probes[0]["content"])["status"] == "probe_passed"
    read = [r for r in results if r["name"] == "read_simulation_results"]
    assert read and str(improved.cycles_sum) in read[-1]["content"]  # it read the cycles

    # no call refused (a failed build is an answer, not a tool error), nothing stalled
    refused = [r for r in results if r["error"] and r["name"] != "compile_kernel"]
    assert refused == [], refused
    for kind in ("model.error", "watchdog.nudge", "team.paused"):
        assert await _events(runtime, run_id, kind) == [], kind

    # frozen, reviewed, submitted to the local judge, its official result on every point
    (frozen,) = [
        f
        for f in await _events(runtime, run_id, "candidate.frozen")
        if f["receipt_key"] == improved.receipt_key
    ]
    candidate = frozen["candidate_id"]
    reviews = await _events(runtime, run_id, "judger.review")
    assert any(r["candidate_id"] == candidate and r["verdict"] == "accepted" for r in reviews)
    # the untouched template the model measured first is its baseline, never frozen: the one
    # submission is the improvement
    submitted = await _events(runtime, run_id, "judger.submission")
    assert [(s["candidate_id"], s["backend"]) for s in submitted] == [(candidate, "local")]
    (official,) = [
        r
        for r in await _events(runtime, run_id, "official.result")
        if r["candidate_id"] == candidate
    ]
    assert official["status"] == "official_pass" and len(official["points"]) == 15
    assert all(p["passed"] for p in official["points"])

    # the model was told the loop (the Judger, the inbox), and why it was woken
    assert "Judger" in model.seen.system[0] and "read_inbox" in model.seen.system[0]
    woken = [p for p in model.seen.prompts if candidate in p]
    assert woken and "read_inbox" in woken[0], model.seen.prompts

    # the result reached the team's inbox and the model read it there
    inbox = [r["content"] for r in results if r["name"] == "read_inbox"]
    assert any(candidate in x and '"points"' in x for x in inbox), inbox
    responses = await _events(runtime, run_id, "model.response")
    assert responses[-1]["text"].rstrip().endswith(DONE), responses[-1]
    assert candidate in responses[-1]["text"] and "15/15" in responses[-1]["text"]

    # every call's usage, as the provider reported it, is in the log
    assert len(responses) == len(server.chat_bodies)
    for response in responses:
        usage = response["usage"]
        assert usage is not None and usage["output_tokens"] == 60 and usage["input_tokens"]
        assert response["model"] == "scripted-model" and response["usage_estimated"] is False
