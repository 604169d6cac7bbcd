"""The baseline's full ascendc-cpu job, once per test process, through the real evaluator (no
tests here). It runs in the shared data folder, so its receipt is in that folder's result cache
and the CLI test is served the same receipt; the trace blobs are in that folder's blob store."""

from __future__ import annotations

import shutil
from pathlib import Path

from justkernel.core.receipts import Receipt
from justkernel.store.blobs import BlobStore
from justkernel.toolchains import check_tree
from justkernel.toolchains.ascendc_cpu.build import BuildOutcome, build_candidate
from justkernel.toolchains.ascendc_cpu.objcache import ObjectCache
from justkernel.toolchains.ascendc_cpu.pch import PrecompiledHeaders
from tests.toolchains.ascendc_cpu.ladder_support import harness_main, toolchain
from tests.workers.test_evaluator_shared import evaluator, fresh_dir, shared_settings

_memo: dict[str, Receipt] = {}


def template() -> Path:
    return toolchain().definition.project_dir


async def build_float32(
    src: Path, *, cache: ObjectCache | None = None, pch: PrecompiledHeaders | None = None
) -> tuple[BuildOutcome, Path]:
    """build_candidate on `src` for float32 only, in a fresh build folder (returned)."""
    tc = toolchain()
    build = fresh_dir("ascendc-build") / "build"
    build.mkdir(mode=0o755)
    out = await build_candidate(
        src,
        build,
        tc.target,
        check_tree(src, tc.definition).editable,
        await harness_main(tc).path(),
        ("float32",),
        tc.limits.compile,
        cache=cache,
        pch=pch,
    )
    return out, build


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
