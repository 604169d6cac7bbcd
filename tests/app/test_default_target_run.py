"""The lab's default target end to end: a run started with no toolchain setting is an
`ascendc-cpu` run, its team workspace is the Ascend C project (with the Ascend C spec, not the C
port's), and an offline team's first full receipt comes from the ascendc-cpu toolchain, whose
trusted artefacts were built in the per-user cache."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from justkernel.agents.harness import forbidden_writes
from justkernel.app import RunSession, open_runtime
from justkernel.core.receipts import Receipt
from justkernel.settings.config import Settings
from justkernel.teams.workspace import SPEC_NAME
from tests.support.default_target import start_on_default_target


async def _first_full_receipt(session: RunSession, seconds: float) -> Receipt:
    """Drive the run until its first measured full receipt, then stop it."""
    runtime = session.runtime
    driving = session.begin(seconds, summarise_stop=True)
    try:
        while not driving.done():
            for experiment in await runtime.lab.experiments.list(session.run_id):
                if experiment.status == "measured" and experiment.receipt_key:
                    path = runtime.lab.settings.resolved_data_dir / "receipts"
                    receipt_file = path / f"{experiment.receipt_key}.json"
                    return Receipt.model_validate_json(receipt_file.read_text())
            await asyncio.sleep(0.5)
        driving.result()
        raise AssertionError("the run ended before a full receipt")
    finally:
        session.stop.set()
        await driving


async def test_a_run_with_no_toolchain_setting_is_an_ascendc_cpu_run(
    monkeypatch: pytest.MonkeyPatch, shared_lab_dir: Path, tmp_path: Path
) -> None:
    monkeypatch.delenv("JUSTKERNEL_TOOLCHAIN")
    settings = Settings(data_dir=shared_lab_dir / "data", config_dir=tmp_path / "config")
    async with open_runtime(settings, slots=2) as runtime:
        session = await start_on_default_target(runtime, "default target", "offline")
        assert (await runtime.lab.runs.get(session.run_id)).meta["toolchain"] == "ascendc-cpu"
        [team] = await runtime.lab.teams.list(session.run_id)
        workspace = Path(team.workspace)
        assert (workspace / "op_kernel" / "confusion_mul_grad.cpp").is_file()
        assert (workspace / "op_host" / "confusion_mul_grad_tiling.h").is_file()
        assert (workspace / "CMakeLists.txt").is_file()
        assert not (workspace / "op_kernel" / "cmg_kernel.c").exists()
        assert not (workspace / "harness").exists() and not (workspace / "Makefile").exists()
        spec = (workspace / SPEC_NAME).read_text()
        assert "Ascend C" in spec and "op_kernel/confusion_mul_grad.cpp" in spec
        assert "harness/harness.c" not in spec  # the C port's rules are not this team's
        denied = forbidden_writes(session.scheduler.operator)  # the agent's own write denials
        assert {"/CMakeLists.txt", "/op_kernel/CMakeLists.txt", "/spec.md"} <= set(denied)
        assert "/include/**" not in denied and "/op_kernel/**" not in denied
        receipt = await _first_full_receipt(session, seconds=600)
        assert receipt.executor.toolchain_id == "ascendc-cpu"
        assert receipt.executor.toolchain_version == runtime.target("ascendc-cpu").toolchain.version
        assert receipt.cycles and all(c.pipeline is not None for c in receipt.cycles)
        # the one-time build was shown as progress in the run's log
        (preparing,) = await runtime.lab.events.read(
            session.run_id, kinds=["run.toolchain_preparing"]
        )
        assert preparing.payload == {
            "toolchain": "ascendc-cpu",
            "detail": "preparing the ascendc-cpu toolchain (one-time build)",
        }
        # the trusted artefacts were built in the per-user cache, not in the data folder
        assert (settings.toolchains_dir / "ascendc-cpu").is_dir()
        assert not (settings.resolved_data_dir / "toolchains" / "ascendc-cpu").exists()
