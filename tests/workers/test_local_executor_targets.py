"""With remote hosts configured, the pool's local executor holds the lab's toolchain cache
(`toolchains.registry.Toolchains`), so it runs jobs of every target the lab has built, not only
the one it was built with, and refuses a job of a toolchain version it does not have."""

from __future__ import annotations

from pathlib import Path

import pytest

from justkernel.core.jobs import JobSpec
from justkernel.operators import load_operator
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.toolchains.protocol import ToolchainError
from justkernel.toolchains.registry import Toolchains
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.local_executor import LocalExecutor
from justkernel.workers.pool import WorkerPool
from justkernel.workers.pool_config import build_pool

CASE = "c15_small_bcast_f32"


def _spec(toolchain_id: str, version: str) -> JobSpec:
    return JobSpec(
        operator="confusion_mul_grad",
        kind="probe",
        case_ids=(CASE,),
        source_tree_hash="0" * 64,
        input_packs={"local": "0" * 64},
        toolchain_id=toolchain_id,
        toolchain_version=version,
    )


async def test_the_local_executor_beside_hosts_runs_every_built_target(
    lab_settings: Settings, tmp_path: Path
) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[local]\nslots = 1\n\n[hosts.a]\naddress = "10.0.0.5"\nuser = "lab"\n')
    settings = lab_settings.model_copy(update={"hosts_file": hosts})
    toolchains = Toolchains(settings.toolchains_dir)
    pool = build_pool(settings, toolchains)
    try:
        local = pool.executors[0]
        assert isinstance(local, LocalExecutor) and local.toolchains is toolchains
        assert not local.accepts(_spec("cpu", "any"))  # nothing built yet
        built = {t: toolchains.get(t) for t in ("cpu", "ascendc-cpu")}
        for toolchain_id, toolchain in built.items():
            assert local.accepts(_spec(toolchain_id, toolchain.version))
            assert not local.accepts(_spec(toolchain_id, "0123456789abcdef"))
        assert toolchains.get("cpu") is built["cpu"]  # one instance per id, shared
    finally:
        await pool.close()

    # jobs of both targets run on that one executor, each with its own toolchain
    only_local = WorkerPool([local])
    operator = load_operator()
    blobs = BlobStore(settings.blobs_dir)
    for toolchain_id, toolchain in built.items():
        view = operator.for_toolchain(toolchain_id)
        evaluator = Evaluator(settings, only_local, toolchain, blobs, definition=view)
        receipt = await evaluator.evaluate(view.project_dir, kind="probe", case_ids=[CASE])
        assert receipt.status == "probe_passed", receipt.detail
        assert receipt.executor.toolchain_id == toolchain_id
        assert receipt.executor.toolchain_version == toolchain.version
    await only_local.close()


def test_a_cache_without_a_folder_holds_only_what_it_was_given() -> None:
    toolchain = Toolchains(None)
    with pytest.raises(ToolchainError, match="not built in this process"):
        toolchain.get("cpu")
    with pytest.raises(ToolchainError, match="unknown toolchain"):
        toolchain.get("gpu")
