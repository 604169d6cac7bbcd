"""The offline playbook's kernel steps for ConfusionMulGrad.

Every step and alternative in resources/playbook/confusion_mul_grad/playbook.toml is a complete
pair of editable files. Each must compile with the fixed flags, pass the static object checks and
run all 15 local cases plus the extra edge shapes of tests/operators/test_edge_shapes.py natively,
with exactly the outcome its manifest entry promises (the plausible-but-wrong step fails where it
says, nowhere else). The promises about speed are checked on cycle counts measured here, with the
lab's cycle model (callgrind, fixed cache geometry, tests/playbook/measure.py) on the perf cases:
relations between measured numbers (each kept step beats the one it builds on), never the
manifest's documented figures, which tests/playbook/measure.py --toml re-measures.

All builds and runs happen once per module, in parallel; the callgrind runs take minutes.
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from justkernel.operators import (
    BuildResult,
    CaseSpec,
    InputPack,
    OperatorDefinition,
    build_input_pack,
    build_project,
    check_pack_outputs,
    ensure_input_pack,
    load_operator,
    local_cases,
    perf_cases,
    run_pack,
    static_check,
)
from tests.operators.test_edge_shapes import EDGE_CASES
from tests.playbook.measure import callgrind, est_cycles

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "resources" / "playbook" / "confusion_mul_grad"
MANIFEST: dict[str, Any] = tomllib.loads((PLAYBOOK / "playbook.toml").read_text())
STEPS: list[dict[str, Any]] = MANIFEST["steps"]
ALTERNATIVES: list[dict[str, Any]] = MANIFEST.get("alternatives", [])
ENTRIES = {e["id"]: e for e in [*STEPS, *ALTERNATIVES]}
EDITABLE_FILES = ("op_kernel/cmg_kernel.c", "op_host/cmg_tiling.c")
EXPECTED = {"faster", "slower", "fails_precision"}


@dataclass
class Outcome:
    build: BuildResult
    run_errors: list[tuple[str, str]] = field(default_factory=list)
    local_failures: set[str] = field(default_factory=set)
    edge_failures: set[str] = field(default_factory=set)
    messages: dict[str, str] = field(default_factory=dict)


def _edge_specs() -> list[CaseSpec]:
    """The extra shapes of tests/operators/test_edge_shapes.py, built the same way."""
    return [
        CaseSpec(
            id=cid,
            input0=s0,
            input1=s1,
            input2=s2,
            dtype=dtype,
            axes=axes,
            keep_dims=keep,
            distribution="positive" if i % 2 else "symmetric",
            seed=9000 + i,
        )
        for i, (cid, s0, s1, s2, dtype, axes, keep) in enumerate(EDGE_CASES)
    ]


def _evaluate(
    entry: dict[str, Any],
    definition: OperatorDefinition,
    root: Path,
    local: InputPack,
    edge: InputPack,
) -> Outcome:
    project = root / "project"
    shutil.copytree(definition.project_dir, project, ignore=shutil.ignore_patterns("build"))
    shutil.copytree(PLAYBOOK / entry["path"], project, dirs_exist_ok=True)
    outcome = Outcome(build=build_project(project, root / "build", definition))
    if not outcome.build.ok:
        return outcome
    for pack, failures in ((local, outcome.local_failures), (edge, outcome.edge_failures)):
        out = root / pack.pack_hash[:12]
        runs = run_pack(outcome.build.harness, pack, out, definition=definition)
        outcome.run_errors += [(r.case_id, r.status) for r in runs if not r.ok]
        for check in check_pack_outputs(pack, out, definition=definition):
            if not check.passed:
                failures.add(check.case_id)
                outcome.messages[check.case_id] = check.message
    return outcome


@pytest.fixture(scope="module")
def definition() -> OperatorDefinition:
    return load_operator("confusion_mul_grad")


@pytest.fixture(scope="module")
def outcomes(
    definition: OperatorDefinition, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Outcome]:
    """Build every entry and run both packs once; builds and runs share the CPUs."""
    work = tmp_path_factory.mktemp("playbook")
    with ThreadPoolExecutor(max_workers=2) as pool:
        local_f = pool.submit(
            ensure_input_pack, local_cases(definition), work / "packs", definition
        )
        edge_f = pool.submit(build_input_pack, _edge_specs(), work / "edge", definition)
        local, edge = local_f.result(), edge_f.result()
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {
            eid: pool.submit(_evaluate, entry, definition, work / eid, local, edge)
            for eid, entry in ENTRIES.items()
        }
        return {eid: f.result() for eid, f in futures.items()}


@pytest.fixture(scope="module")
def measured(
    outcomes: dict[str, Outcome],
    definition: OperatorDefinition,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, int]:
    """est_cycles summed over the perf cases, measured now for the baseline and every entry.

    Every run uses paths of the same length (the stack layout, and with it the cache sets of
    stack variables, moves with argv), so differences are the kernels' alone."""
    work = tmp_path_factory.mktemp("cycles")
    pack = ensure_input_pack(perf_cases(definition), work / "packs", definition)
    project = work / "baseline"
    shutil.copytree(definition.project_dir, project, ignore=shutil.ignore_patterns("build"))
    baseline = build_project(project, work / "baseline-build", definition)
    assert baseline.ok, baseline.log
    harnesses = {"baseline": baseline.harness}
    for eid, outcome in outcomes.items():
        assert outcome.build.ok, eid
        harnesses[eid] = outcome.build.harness
    jobs = [(name, cid) for name in harnesses for cid in pack.case_ids]

    def one(index: int, name: str, case_id: str) -> int:
        run = work / f"run-{index:04d}"
        run.mkdir()
        harness = Path(shutil.copy2(harnesses[name], run / "harness"))
        entry = definition.build.kernel_entry
        return est_cycles(callgrind(harness, pack.case_dir(case_id), run / "out", entry))

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [(name, pool.submit(one, i, name, cid)) for i, (name, cid) in enumerate(jobs)]
        sums = dict.fromkeys(harnesses, 0)
        for name, future in futures:
            sums[name] += future.result()
    return sums


# ---- the manifest --------------------------------------------------------------------------------


def test_manifest_is_well_formed(definition: OperatorDefinition) -> None:
    assert MANIFEST["playbook"]["operator"] == definition.name
    ids = [e["id"] for e in [*STEPS, *ALTERNATIVES]]
    assert len(ids) == len(set(ids)), "duplicate ids"
    local_ids = {c.id for c in local_cases(definition)}
    perf_ids = {c.id for c in perf_cases(definition)}
    edge_ids = {c[0] for c in EDGE_CASES}
    step_ids = {s["id"] for s in STEPS}
    for e in ENTRIES.values():
        for key in ("id", "title", "path", "hypothesis", "change", "validation", "expected"):
            assert isinstance(e.get(key), str) and e[key].strip(), (e["id"], key)
        assert e["expected"] in EXPECTED, e["id"]
        assert set(e["probe_cases"]) <= local_ids and e["probe_cases"], e["id"]
        assert set(e["expected_failures"]) <= local_ids, e["id"]
        assert set(e.get("expected_edge_failures", [])) <= edge_ids, e["id"]
        assert (e["expected"] == "fails_precision") == bool(e["expected_failures"]), e["id"]
        assert e["builds_on"] == "baseline" or e["builds_on"] in step_ids, e["id"]
        folder = PLAYBOOK / e["path"]
        assert folder.is_dir(), e["id"]
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        assert files == sorted(EDITABLE_FILES), (e["id"], files)
        assert all(definition.paths.access(f) == "editable" for f in files), e["id"]
        measured = e["measured_est_cycles"]
        assert set(measured) == perf_ids, e["id"]
        assert e["measured_est_cycles_sum"] == sum(measured.values()), e["id"]
    for s in STEPS:
        for alt in s.get("alternatives", []):
            assert ENTRIES[alt].get("alternative_of") == s["id"], (s["id"], alt)
    for a in ALTERNATIVES:
        assert a["id"] in ENTRIES[a["alternative_of"]]["alternatives"], a["id"]


@pytest.mark.timeout(1800)
def test_main_line_measures_faster_and_the_wrong_step_is_reverted(measured: dict[str, int]) -> None:
    """Measured now: each kept step beats the one it builds on; reverted steps are not kept."""
    kept = [s for s in STEPS if s["expected"] == "faster"]
    assert [s["id"] for s in STEPS if s["expected"] != "faster"] == ["x_sequential_float_sum"]
    previous = "baseline"
    for s in kept:
        assert s["builds_on"] == previous, s["id"]
        assert measured[s["id"]] < measured[previous], (s["id"], measured)
        previous = s["id"]
    for e in ENTRIES.values():
        faster = measured[e["id"]] < measured[e["builds_on"]]
        assert faster == (e["expected"] in ("faster", "fails_precision")), (e["id"], measured)
    # alternatives end at other cycle counts than their main step, or say that they tie on perf
    for a in ALTERNATIVES:
        main = measured[a["alternative_of"]]
        tie = abs(measured[a["id"]] - main) <= main // 1000
        assert tie == bool(a.get("ties_main_on_perf")), (a["id"], measured)


def test_kernel_sources_do_not_branch_on_case_shapes(definition: OperatorDefinition) -> None:
    """No literal from the local or perf shapes in code (comments aside), beyond powers of two."""
    extents = set()
    for case in (*local_cases(definition), *perf_cases(definition)):
        for shape in case.shapes:
            extents |= {n for n in shape if n > 16 and n & (n - 1)}
    for e in ENTRIES.values():
        for rel in EDITABLE_FILES:
            text = (PLAYBOOK / e["path"] / rel).read_text()
            code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
            literals = {int(x) for x in re.findall(r"\b\d+\b", code)}
            assert not literals & extents, (e["id"], rel, literals & extents)


# ---- the kernels ---------------------------------------------------------------------------------


@pytest.mark.parametrize("entry_id", list(ENTRIES))
def test_builds_with_fixed_flags_and_passes_static_checks(
    entry_id: str, outcomes: dict[str, Outcome], definition: OperatorDefinition
) -> None:
    build = outcomes[entry_id].build
    assert build.ok, f"{build.failed_step}\n{build.log}\n{build.problems}"
    flags = " ".join(definition.build.cflags)
    assert build.log.count(f"gcc {flags} ") == 3  # kernel, tiling, harness objects
    assert "warning" not in build.log
    assert static_check(build.objects["kernel"], definition.build.kernel_entry, definition) == ()
    assert static_check(build.objects["tiling"], definition.build.tiling_entry, definition) == ()


@pytest.mark.parametrize("entry_id", list(ENTRIES))
def test_local_cases_match_the_manifest(entry_id: str, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[entry_id]
    assert outcome.build.ok
    assert outcome.run_errors == []
    expected = set(ENTRIES[entry_id]["expected_failures"])
    assert outcome.local_failures == expected, {
        k: v for k, v in outcome.messages.items() if k in outcome.local_failures ^ expected
    }


@pytest.mark.parametrize("entry_id", list(ENTRIES))
def test_edge_shapes_match_the_manifest(entry_id: str, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[entry_id]
    assert outcome.build.ok
    assert outcome.run_errors == []
    expected = set(ENTRIES[entry_id].get("expected_edge_failures", []))
    assert outcome.edge_failures == expected, {
        k: v for k, v in outcome.messages.items() if k in outcome.edge_failures ^ expected
    }
