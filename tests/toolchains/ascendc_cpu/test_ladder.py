"""The ladder: one Ascend C kernel with five documented optimisations as compile-time knobs
(tests/fixtures/ascendc/README.md). The cycle model must rank every worse rung above the best
one on every perf case, and give bit-identical figures for the same source from another folder."""

from __future__ import annotations

import pytest

from justkernel.core.receipts import Status
from justkernel.toolchains.ascendc_cpu.run import TRACE_SUFFIX
from tests.toolchains.ascendc_cpu.ladder_support import (
    PERF_CASES,
    VARIANTS,
    WORSE,
    ladder,
    ladder_project,
    run,
    toolchain,
)

pytestmark = pytest.mark.timeout(300)


def table(figures: dict[str, dict[str, int]]) -> str:
    head = f"{'variant':<16}" + "".join(f"{c:>16}" for c in PERF_CASES)
    rows = [
        f"{name:<16}" + "".join(f"{figures[name].get(c, 0):>16,}" for c in PERF_CASES)
        for name in VARIANTS
    ]
    return "\n".join([head, *rows])


async def test_every_worse_rung_takes_more_cycles_on_every_perf_case() -> None:
    runs = await ladder()
    for name, ran in runs.items():
        r = ran.receipt
        assert r.status is Status.MEASURED, (name, r.status, r.detail)
        assert [c.case_id for c in r.cycles] == list(PERF_CASES)
        assert all(c.check.passed and c.pipeline is not None for c in r.cycles), name
    figures = {name: ran.cycles() for name, ran in runs.items()}
    print("\nmodelled cycles (ascend910b)\n" + table(figures))
    best = figures["best"]
    for name in WORSE:
        for case in PERF_CASES:
            assert figures[name][case] > best[case], (name, case, "\n" + table(figures))


async def test_each_rung_moves_the_pipe_it_is_about() -> None:
    """Why each worse rung is slower, read from the per-pipe figures of the slowest core."""
    runs = await ladder()

    def pipes(name: str, case: str) -> dict[str, int]:
        c = next(c for c in runs[name].receipt.cycles if c.case_id == case)
        assert c.pipeline is not None
        return {p: f.busy for p, f in c.pipeline.pipes.items()}

    for case in PERF_CASES:
        best = pipes("best", case)
        # scalar loops put the element work on S
        assert pipes("scalar_loops", case)["S"] > 10 * best["S"], case
        # a second read of input1 is more MTE2 work on the core
        assert pipes("separate_passes", case)["MTE2"] > best["MTE2"], case
        # more, smaller copies pay the per-transfer latency more often
        assert pipes("small_tiles", case)["MTE2"] > best["MTE2"], case
        # one core carries every row: more MTE2 on the slowest core
        assert pipes("one_core", case)["MTE2"] > best["MTE2"], case
        block_dims = {
            name: next(c for c in runs[name].receipt.cycles if c.case_id == case).pipeline.block_dim  # type: ignore[union-attr]
            for name in ("best", "one_core")
        }
        assert block_dims["one_core"] == 1 and (block_dims["best"] or 0) > 1, block_dims
        # single buffering does the same work, only without overlap
        assert pipes("single_buffer", case)["MTE2"] == best["MTE2"], case


async def test_the_same_source_gives_identical_cycles_from_another_folder() -> None:
    runs = await ladder()
    first = runs["best"]
    tc = toolchain()
    again = await run(
        tc, ladder_project(tc, "best", where="another/much/deeper/folder"), perf_case_ids=PERF_CASES
    )
    a, b = first.receipt, again.receipt
    assert b.status is Status.MEASURED, b.detail
    assert a.source_sha256 == b.source_sha256 and a.job_key == b.job_key
    assert first.cycles() == again.cycles()
    for x, y in zip(a.cycles, b.cycles, strict=True):
        assert x.pipeline == y.pipeline, x.case_id
        traces = [[ref.sha256 for ref in c.logs if ref.name.endswith(TRACE_SUFFIX)] for c in (x, y)]
        assert traces[0] and traces[0] == traces[1], x.case_id
