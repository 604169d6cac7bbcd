"""Process-wide resources shared by the evaluator and CPU toolchain tests (no tests here).

Input packs, the harness object and the naive baseline's full receipt (the only callgrind run
of the slow baseline) are made once per test process and reused by every module that imports
this one, so the whole suite pays for them once. Everything lives in one world-traversable
temp folder: the sandbox uid cannot reach pytest's private tmp_path (see sandbox_host).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import JobKind, Receipt
from justkernel.operators import InputPack, load_operator
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.toolchains import check_tree
from justkernel.toolchains.cpu import CpuToolchain
from justkernel.toolchains.sandbox import SandboxUnavailable, find_tools
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.pool import LocalPool

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
KERNELS = FIXTURES / "kernels"
HOSTILE = FIXTURES / "hostile_kernels"
SMALL_CASE = "c15_small_bcast_f32"
COLUMN_CASES = {
    "c03_col_f32",
    "c04_col_keep_pos_f32",
    "c07_in1_row_col_f32",
    "c12_col_keep_pos_f16",
}
_memo: dict[str, object] = {}


def require_tools(valgrind: bool = False) -> None:
    """Skip (never fake) when the sandbox, gcc or valgrind is missing."""
    try:
        find_tools()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    for tool in ("gcc", "objdump", *(("valgrind",) if valgrind else ())):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")


@functools.cache
def shared_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="jk-eval-tests-"))
    root.chmod(0o755)
    atexit.register(shutil.rmtree, root, True)
    return root


def fresh_dir(prefix: str) -> Path:
    """A new folder under the shared root that the sandbox uid can traverse."""
    d = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=shared_root()))
    d.chmod(0o755)
    return d


def shared_settings() -> Settings:
    root = shared_root()
    return Settings(data_dir=root / "data", config_dir=root / "config")


def own_settings(prefix: str) -> Settings:
    """Settings with a private data folder (own receipt cache and packs)."""
    d = fresh_dir(prefix)
    return Settings(data_dir=d / "data", config_dir=d / "config")


def toolchain(**kwargs: object) -> CpuToolchain:
    """A CPU toolchain whose harness object is cached in the shared data folder (as the CLI's)."""
    cache = shared_settings().resolved_data_dir / "toolchains" / "cpu"
    return CpuToolchain(cache_dir=cache, **kwargs)  # type: ignore[arg-type]


def make_project(
    variant: str | None = None,
    *,
    hostile: str | None = None,
    dest: Path | None = None,
    replace: dict[str, str] | None = None,
) -> Path:
    """The template with a fixture kernel laid over it; `replace` fills source placeholders."""
    definition = load_operator()
    dest = dest or fresh_dir(f"project-{hostile or variant or 'baseline'}") / "project"
    shutil.copytree(definition.project_dir, dest, ignore=shutil.ignore_patterns("build"))
    if variant is not None:
        shutil.copytree(KERNELS / variant, dest, dirs_exist_ok=True)
    if hostile is not None:
        shutil.copytree(HOSTILE / "_shared", dest, dirs_exist_ok=True)
        shutil.copytree(HOSTILE / hostile, dest, dirs_exist_ok=True)
    kernel = dest / definition.build.kernel_source
    text = kernel.read_text()
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    kernel.write_text(text)
    for dirpath, _dirs, files in os.walk(dest):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)
    return dest


def evaluator(
    slots: int = 2,
    tc: CpuToolchain | None = None,
    settings: Settings | None = None,
    **kwargs: object,
) -> Evaluator:
    settings = settings or shared_settings()
    return Evaluator(
        settings,
        LocalPool(slots=slots),
        tc or toolchain(),
        BlobStore(settings.blobs_dir),
        **kwargs,  # type: ignore[arg-type]
    )


async def packs(kind: JobKind = JobKind.FULL) -> dict[str, InputPack]:
    ev = evaluator()
    try:
        return await ev.packs(kind)
    finally:
        await ev.pool.close()


def spec_for(
    tc: CpuToolchain,
    src: Path,
    pack_set: dict[str, InputPack],
    kind: JobKind,
    case_ids: Sequence[str],
    perf_case_ids: Sequence[str] = (),
) -> JobSpec:
    """A job spec for a direct toolchain run (what the evaluator would build)."""
    return JobSpec(
        operator=tc.definition.name,
        kind=kind,
        case_ids=tuple(case_ids),
        perf_case_ids=tuple(perf_case_ids),
        source_tree_hash=check_tree(src, tc.definition).tree_hash,
        input_packs={role: p.pack_hash for role, p in pack_set.items()},
        toolchain_id=tc.id,
        toolchain_version=tc.version,
    )


async def baseline_full_receipt() -> Receipt:
    """The template's full job (15 cases + 3 callgrind runs), once per process, cached on disk
    in the shared data folder so the CLI test is served the same receipt."""
    if "baseline" not in _memo:
        ev = evaluator(slots=1, sim_parallelism=2)
        try:
            _memo["baseline"] = await ev.evaluate(load_operator().project_dir, team="baseline")
        finally:
            await ev.pool.close()
    return _memo["baseline"]  # type: ignore[return-value]
