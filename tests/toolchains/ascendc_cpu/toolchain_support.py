"""The baseline's full ascendc-cpu job, once per test process, through the real evaluator (no
tests here). It runs in the shared data folder, so its receipt is in that folder's result cache
and the CLI test is served the same receipt; the trace blobs are in that folder's blob store."""

from __future__ import annotations

import shutil
from pathlib import Path

from justkernel.core.receipts import Receipt
from justkernel.store.blobs import BlobStore
from tests.toolchains.ascendc_cpu.ladder_support import toolchain
from tests.workers.test_evaluator_shared import evaluator, fresh_dir, shared_settings

_memo: dict[str, Receipt] = {}


def template() -> Path:
    return toolchain().definition.project_dir


def copy_template(prefix: str) -> Path:
    """A private copy of the Ascend C template the sandbox uid can read."""
    dest = fresh_dir(prefix) / "project"
    shutil.copytree(template(), dest)
    return dest


async def baseline_receipt() -> Receipt:
    """The template's full job: 15 local cases and the 3 perf cases under the cycle model."""
    if "baseline" not in _memo:
        ev = evaluator(slots=1, tc=toolchain(), sim_parallelism=2)  # type: ignore[arg-type]
        try:
            _memo["baseline"] = await ev.evaluate(template(), team="ascendc-baseline")
        finally:
            await ev.pool.close()
    return _memo["baseline"]


def blob(sha256: str) -> bytes:
    return BlobStore(shared_settings().blobs_dir).get(sha256)
