"""What a model reads of real receipts through `read_simulation_results`: the summary's bound
pipe and per-pipe table, the paged per-pipe timeline of a perf case (bounded pages, a clear
answer past the last one), a misuse's check, site and message, and a clear "no pipeline"
answer for a receipt of the cpu toolchain. The ascendc-cpu receipt is the Ascend C template's
full job (`toolchain_support.baseline_receipt`), the cpu one the C port's
(`baseline_full_receipt`): each evaluated once per test process and shared with the tests of
the toolchains, the web and the workers, their blobs in the shared store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from justkernel.agents.pipeline_pages import PAGE_CHARS, PipelinePages
from justkernel.agents.tools import TeamContext, build_tools
from justkernel.core.receipts import Receipt
from justkernel.store.blobs import BlobStore
from tests.toolchains.ascendc_cpu.ladder_support import (
    PROBE_CASE,
    marked_site,
    misuse_project,
    run,
    toolchain,
)
from tests.toolchains.ascendc_cpu.toolchain_support import baseline_receipt
from tests.workers.test_evaluator_shared import baseline_full_receipt, shared_settings


@pytest.fixture(scope="module")
def ascendc_receipt() -> Receipt:
    return asyncio.run(baseline_receipt())


@pytest.fixture(scope="module")
def cpu_receipt() -> Receipt:
    return asyncio.run(baseline_full_receipt())


class _Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root


def _reader(receipts: list[Receipt], tmp_path: Path) -> Any:
    """The real `read_simulation_results` tool over a context holding `receipts` and the
    shared blob store (the only parts that tool touches)."""
    ctx = TeamContext(
        run_id="run",
        team_id="team",
        workspace=_Workspace(tmp_path),  # type: ignore[arg-type]
        evaluator=None,  # type: ignore[arg-type]
        experiments=None,  # type: ignore[arg-type]
        events=None,  # type: ignore[arg-type]
        blobs=BlobStore(shared_settings().blobs_dir),
        receipts={r.job_key: r for r in receipts},
        last_receipt_key=receipts[-1].job_key,
    )
    tool = next(t for t in build_tools(ctx) if t.name == "read_simulation_results")

    def read(**args: Any) -> dict[str, Any]:
        return json.loads(asyncio.run(tool.ainvoke(args)))

    return read


def test_summary_holds_the_bound_pipe_and_per_pipe_figures(
    ascendc_receipt: Receipt, tmp_path: Path
) -> None:
    summary = _reader([ascendc_receipt], tmp_path)()
    assert summary["status"] == "measured"
    pipeline = summary["pipeline"]
    assert set(pipeline) == set(ascendc_receipt.perf_case_ids)
    for cycle in ascendc_receipt.cycles:
        shown, real = pipeline[cycle.case_id], cycle.pipeline
        assert real is not None
        assert shown["total_cycles"] == real.total == cycle.est_cycles
        assert shown["bound_pipe"] == real.bound_pipe
        assert shown["bound_pipe"] in shown["pipes"]
        assert list(shown["pipes"])[:2] == ["MTE2", "V"]  # chart order, not alphabetical
        for name, figures in real.pipes.items():
            row = shown["pipes"][name]
            assert row["busy"] == figures.busy
            assert row["instructions"] == figures.instructions
            assert row["utilisation"] == pytest.approx(figures.utilisation, abs=5e-4)


def test_pipeline_section_pages_a_real_trace(ascendc_receipt: Receipt, tmp_path: Path) -> None:
    read = _reader([ascendc_receipt], tmp_path)
    costliest = max(ascendc_receipt.cycles, key=lambda c: c.est_cycles or 0)
    assert costliest.pipeline is not None
    first = read(section="pipeline")
    assert first["case_id"] == costliest.case_id  # the default
    assert first["page"] == 1 and first["bound_pipe"] == costliest.pipeline.bound_pipe
    assert first["lanes"][0]["core_makespan"] == costliest.pipeline.total  # slowest core first
    lanes = {lane["pipe"]: lane for lane in first["lanes"] if lane["core"] == 0}
    for name, figures in costliest.pipeline.pipes.items():
        if figures.busy:
            assert lanes[name]["busy"] == figures.busy  # the union equals the model's figure
    v = lanes["V"]
    assert v["top_instructions"] and v["top_instructions"][0]["site"].startswith("op_kernel/")
    gap = v["longest_idle_gaps"][0]
    assert gap["cycles"] == gap["to"] - gap["from"] > 0
    assert all(0 < share <= 1 for share in gap["others_busy"].values())
    # the template is bound on MTE2: V idles while loads run
    assert v["idle"]["others_busy"]["MTE2"] >= 0.9

    for n in range(1, first["pages"] + 1):
        answer = read(section="pipeline", case_id=costliest.case_id, page=n)
        assert len(json.dumps(answer, ensure_ascii=False, separators=(",", ":"))) <= PAGE_CHARS
    past = read(section="pipeline", page=first["pages"] + 1)
    assert "out of range" in past["error"] and costliest.case_id in past["error"]
    assert "no perf case" in read(section="pipeline", case_id="c01_nope")["error"]
    log = read(section="log", offset=0)
    assert "\ufffd" not in log["log"]  # trace blobs (gzip) are not dumped as text

    # the same trace on smaller pages: whole lanes per page, each page its own lanes
    small = PipelinePages(BlobStore(shared_settings().blobs_dir).get, page_chars=1500)
    one = small.page(ascendc_receipt, costliest.case_id, 1)
    two = small.page(ascendc_receipt, costliest.case_id, 2)
    assert one["pages"] >= 2 and one["next_page"] == 2
    assert one["lanes"] and two["lanes"] and one["lanes"][0] != two["lanes"][0]
    assert "bound_pipe" not in two  # the header is page 1's
    paged = [
        lane
        for n in range(1, one["pages"] + 1)
        for lane in small.page(ascendc_receipt, costliest.case_id, n)["lanes"]
    ]
    assert paged == first["lanes"] + [
        lane
        for n in range(2, first["pages"] + 1)
        for lane in read(section="pipeline", page=n)["lanes"]
    ]


def test_cpu_receipt_has_no_pipeline(cpu_receipt: Receipt, tmp_path: Path) -> None:
    read = _reader([cpu_receipt], tmp_path)
    assert "pipeline" not in read()
    answer = read(section="pipeline")
    assert "no pipeline for the cpu toolchain" in answer["error"]
    profile = read(section="profile")["profile"]
    assert profile and all(p["counters"]["Ir"] > 0 for p in profile)


def test_summary_names_a_misuse_check_site_and_message(tmp_path: Path) -> None:
    """A real api_misuse receipt (the racy fixture kernel of test_misuse, one probe case)."""
    tc = toolchain()
    project = misuse_project(tc, "pipeline_hazard")
    receipt = asyncio.run(run(tc, project)).receipt
    summary = _reader([receipt], tmp_path)()
    assert summary["status"] == "api_misuse"
    file, line = marked_site(project)
    misuse = summary["misuse"]
    assert misuse["check"] == "pipeline_hazard" and misuse["site"] == f"{file}:{line}"
    assert "MTE2" in misuse["message"] and misuse["case_id"] == PROBE_CASE
    assert "rule-review" in summary["misuse_help"]
    failed = summary["failed_cases"][0]
    assert failed["outcome"] == "api_misuse" and failed["misuse"]["check"] == "pipeline_hazard"
