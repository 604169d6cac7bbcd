"""The fixed harness end to end with the probe operator: outputs, run.json, trace.json,
misuse.json, and the exit codes the toolchain maps to verdicts (harness_main.cpp, contract in
the issue 12 design)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from justkernel.toolchains.ascendc_cpu import soc
from tests.toolchains.ascendc_cpu.harness_support import (
    SOURCES,
    make_case,
    probe_build,
    run_harness,
)

SHAPES = ((16, 64), (16, 64), (16, 64))
PIPES = {"S", "V", "MTE2", "MTE3"}


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[np.ndarray, ...]]:
    folder = tmp_path_factory.mktemp("case")
    return folder, make_case(folder, SHAPES)


def _line_of(text: str) -> int:
    lines = (SOURCES / "probe_kernel.cpp").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_outputs_and_run_json(case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path) -> None:
    folder, inputs = case
    done = run_harness(probe_build().harness(), folder, tmp_path)
    assert done.returncode == 0, done.stderr
    out0 = np.fromfile(tmp_path / "output0.bin", dtype="<f4").reshape(SHAPES[0])
    out1 = np.fromfile(tmp_path / "output1.bin", dtype="<f4")
    np.testing.assert_array_equal(out0, inputs[0] * inputs[1])  # both cores' rows, exact
    np.testing.assert_array_equal(out1, np.zeros(16, dtype=np.float32))
    assert not (tmp_path / "trace.json").exists() and not (tmp_path / "misuse.json").exists()

    run = json.loads((tmp_path / "run.json").read_text())
    assert set(run) == {
        "schema",
        "soc",
        "block_dim",
        "workspace_bytes",
        "tiling_bytes",
        "cycles",
        "ops",
        "trace_truncated",
    }
    assert (run["schema"], run["soc"], run["block_dim"]) == (1, "ascend910b", 2)
    assert (run["workspace_bytes"], run["tiling_bytes"]) == (64, 8)  # two uint32 fields
    cycles = run["cycles"]
    cores = cycles["cores"]
    assert [c["block"] for c in cores] == [0, 1]
    assert cycles["total"] == max(c["makespan"] for c in cores) > 0
    slowest = max(cores, key=lambda c: c["makespan"])
    assert set(slowest["pipes"]) == PIPES == set(cycles["pipes"])
    for name, figures in cycles["pipes"].items():
        assert figures["busy"] == slowest["pipes"][name]["busy"]
        assert figures["utilisation"] == pytest.approx(
            figures["busy"] / slowest["makespan"], abs=1e-6
        )
    bound = max(slowest["pipes"], key=lambda p: slowest["pipes"][p]["busy"])
    assert cycles["bound_pipe"] == bound
    ops = {(o["op"], o["pipe"]): o for o in run["ops"]}
    assert ops[("DataCopy", "MTE2")]["calls"] == 4  # two inputs per core
    assert ops[("DataCopy", "MTE3")]["calls"] == 4  # two outputs per core
    assert ops[("Mul", "V")]["calls"] == 2 and ops[("Duplicate", "V")]["calls"] == 2
    assert run["trace_truncated"] is False


def test_trace_is_trace_event_json_with_a_lane_per_pipe_per_core(
    case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path
) -> None:
    folder, _ = case
    done = run_harness(probe_build().harness(), folder, tmp_path, "--trace")
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "trace.json").read_text())
    run = json.loads((tmp_path / "run.json").read_text())
    clock = soc.load_soc().figures.clock_mhz.value
    lanes: dict[tuple[int, int], str] = {}
    busy: dict[tuple[int, str], int] = defaultdict(int)
    for e in doc["traceEvents"]:
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                assert (e["pid"], e["tid"]) not in lanes
                lanes[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        assert e["ph"] == "X" and e["name"]
        lane = lanes[(e["pid"], e["tid"])]
        assert e["ts"] >= 0 and e["dur"] >= 0
        assert e["dur"] == pytest.approx(e["args"]["cycles"] / clock, abs=1e-4)
        assert e["args"]["site"].startswith("op_kernel/probe_kernel.cpp:")
        busy[(e["pid"], lane)] += e["args"]["cycles"]
    for pid in (0, 1):
        assert {name for (p, _), name in lanes.items() if p == pid} == PIPES
    # every instruction of the vector and DMA pipes is on its lane
    for core in run["cycles"]["cores"]:
        for pipe in ("V", "MTE2", "MTE3"):
            assert busy[(core["block"], pipe)] == core["pipes"][pipe]["busy"], (core, pipe)


def test_same_case_same_bytes(case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path) -> None:
    folder, _ = case
    for name in ("a", "b"):
        done = run_harness(probe_build().harness(), folder, tmp_path / name, "--trace")
        assert done.returncode == 0, done.stderr
    for name in ("run.json", "trace.json", "output0.bin"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_raw_gm_dereference_is_gm_raw_access(
    case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path
) -> None:
    folder, _ = case
    done = run_harness(probe_build().harness("RAW"), folder, tmp_path)
    assert done.returncode == 7, done.stderr
    misuse = json.loads((tmp_path / "misuse.json").read_text())
    assert misuse["check"] == "gm_raw_access" and misuse["block"] == 0
    assert "byte 8 of input1" in misuse["message"]
    assert misuse["file"] is None and misuse["line"] is None  # a fault has no source line
    assert not (tmp_path / "output0.bin").exists() and not (tmp_path / "run.json").exists()


def test_writing_the_tiling_data_is_gm_write_readonly(
    case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path
) -> None:
    folder, _ = case
    done = run_harness(probe_build().harness("TILING_WRITE"), folder, tmp_path)
    assert done.returncode == 7, done.stderr
    misuse = json.loads((tmp_path / "misuse.json").read_text())
    assert misuse["check"] == "gm_write_readonly" and misuse["block"] == 0
    assert "byte 2 of the tiling data" in misuse["message"]


def test_a_caught_misuse_is_still_reported(
    case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path
) -> None:
    folder, _ = case
    done = run_harness(probe_build().harness("CATCH"), folder, tmp_path)
    assert done.returncode == 7, done.stderr
    misuse = json.loads((tmp_path / "misuse.json").read_text())
    assert misuse == {
        "check": "datacopy_misaligned",
        "message": misuse["message"],
        "file": "op_kernel/probe_kernel.cpp",
        "line": _line_of("DataCopy(la, a, 3)"),
        "block": 0,
    }


def test_racy_kernel_fails_the_hazard_check_and_passes_without_it(
    case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path
) -> None:
    folder, inputs = case
    racy = probe_build().harness("RACY")
    done = run_harness(racy, folder, tmp_path / "checked")
    assert done.returncode == 7, done.stderr
    misuse = json.loads((tmp_path / "checked" / "misuse.json").read_text())
    assert misuse["check"] == "pipeline_hazard"
    assert misuse["line"] == _line_of("Mul(lo, la, lb, n)")
    plain = run_harness(racy, folder, tmp_path / "plain", "--no-hazard-checks")
    assert plain.returncode == 0, plain.stderr
    out0 = np.fromfile(tmp_path / "plain" / "output0.bin", dtype="<f4").reshape(SHAPES[0])
    np.testing.assert_array_equal(out0, inputs[0] * inputs[1])


def test_blocks_pass_partials_through_gm_across_sync_all(
    case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path
) -> None:
    # every block writes 8 products to the workspace, SyncAll, block 0 adds them all up: the
    # harness runs the blocks side by side, so block 0 sees block 1's partial (not 0xFF bytes,
    # not unsupported_argument), and the run is the same bytes every time
    folder, inputs = case
    harness = probe_build().harness("SYNCALL")
    runs = [tmp_path / "a", tmp_path / "b"]
    for out in runs:
        done = run_harness(harness, folder, out, "--trace")
        assert done.returncode == 0, done.stderr
        assert not (out / "misuse.json").exists()
    product = (inputs[0] * inputs[1]).astype(np.float32)
    out1 = np.fromfile(runs[0] / "output1.bin", dtype="<f4")
    expected = np.zeros(16, dtype=np.float32)
    expected[:8] = product[0, :8] + product[8, :8]  # block 0's and block 1's first row
    np.testing.assert_array_equal(out1, expected)
    out0 = np.fromfile(runs[0] / "output0.bin", dtype="<f4").reshape(SHAPES[0])
    np.testing.assert_array_equal(out0, product)
    for name in ("output0.bin", "output1.bin", "run.json", "trace.json"):
        assert (runs[0] / name).read_bytes() == (runs[1] / name).read_bytes(), name
    cores = json.loads((runs[0] / "run.json").read_text())["cycles"]["cores"]
    assert [c["block"] for c in cores] == [0, 1]
    assert cores[0]["makespan"] > cores[1]["makespan"]  # block 0 waited, then summed


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("reject", "the tiling function rejected the case"),
        ("block_dim=0", "block_dim 0 outside [1, 40]"),
        ("block_dim=41", "block_dim 41 outside [1, 40]"),
        (f"workspace={(256 << 20) + 1}", "workspace of 268435457 bytes outside"),
    ],
)
def test_tiling_rejected_is_exit_5(
    case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path, mode: str, message: str
) -> None:
    folder, _ = case
    done = run_harness(probe_build().harness(), folder, tmp_path, mode=mode)
    assert done.returncode == 5 and message in done.stderr, done.stderr
    assert not any(tmp_path.iterdir())


def test_usage_and_case_errors(case: tuple[Path, tuple[np.ndarray, ...]], tmp_path: Path) -> None:
    folder, _ = case
    harness = probe_build().harness()
    assert run_harness(harness, folder, tmp_path, "--reps").returncode == 2
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "case.txt").write_text((folder / "case.txt").read_text())
    for i in range(3):
        (bad / f"input{i}.bin").write_bytes((folder / f"input{i}.bin").read_bytes())
    (bad / "input2.bin").write_bytes(b"\0" * 12)  # does not match its shape
    done = run_harness(harness, bad, tmp_path / "out")
    assert done.returncode == 3 and "input2.bin does not match" in done.stderr
    (bad / "case.txt").write_text("cmg_case 1\nbogus 3\n")
    assert run_harness(harness, bad, tmp_path / "out").returncode == 3
    blocked = tmp_path / "blocked"
    (blocked / "output0.bin").mkdir(parents=True)  # a folder where the output file goes
    done = run_harness(harness, folder, blocked)
    assert done.returncode == 6 and "cannot write" in done.stderr, done.stderr
