"""CANN profiler parsers on fixture outputs in the documented formats (tests/fixtures/cann/,
figures explained in its README and in docs/simulation-and-judging.md "The CANN toolchain")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from justkernel.toolchains.cann.opprof import find_opprof, parse_device, parse_simulator
from justkernel.toolchains.cann.parse import (
    parse_code_exe,
    parse_instr_exe,
    parse_op_basic_info,
    prof_sum,
    task_duration_us,
)
from justkernel.toolchains.cann.tables import CannParseError
from justkernel.toolchains.cann.trace import parse_trace

CANN = Path(__file__).resolve().parent.parent / "fixtures" / "cann"
SIM = CANN / "simulator"
OPPROF = SIM / "OPPROF_20261129103015_PXKQZBNA"
CORE0 = OPPROF / "simulator" / "core0.veccore0"
PERF = ("p01_row_f32", "p02_col_f32", "p03_full_f32")


def test_simulator_run_gives_the_documented_figures() -> None:
    r = parse_simulator(SIM)
    assert r.root == OPPROF
    assert [c.core for c in r.cores] == ["core0.veccore0", "core0.veccore1", "core1.veccore0"]
    assert [c.cycles for c in r.cores] == [19_800, 18_000, 12_600]
    assert all(c.cycles_source == "code_exe" for c in r.cores)
    assert r.total_cycles == 19_800 and r.slowest_core == "core0.veccore0"
    assert r.sum_cycles == 50_400
    assert r.running_time_us == pytest.approx(11.0)
    assert r.duration_us == pytest.approx(11.6)
    pipes = r.pipes
    assert pipes is not None
    assert {p: t.cycles for p, t in pipes.items()} == {
        "MTE2": 18_180,
        "MTE3": 9_180,
        "SCALAR": 7_020,
        "VECTOR": 16_020,
    }
    assert sum(t.cycles for t in pipes.values()) == r.sum_cycles  # instr and code agree
    spans = [c.trace.span_us for c in r.cores if c.trace]
    assert spans == pytest.approx([11.6, 10.7, 8.1])


def test_summary_is_plain_json_with_every_figure() -> None:
    data = json.loads(json.dumps(parse_simulator(OPPROF).to_dict()))
    assert data["opprof"] == OPPROF.name
    assert (data["total_cycles"], data["sum_cycles"], data["duration_us"]) == (19_800, 50_400, 11.6)
    core0 = data["cores"][0]
    assert core0["pipe_busy_us"] == {"MTE2": 4.5, "MTE3": 3.8, "SCALAR": 0.1, "VECTOR": 3.4}
    assert core0["pipe_cycles"] == {"MTE2": 7_200, "MTE3": 3_600, "SCALAR": 2_700, "VECTOR": 6_300}


def test_code_exe_sums_the_rows_and_can_keep_only_the_kernel_lines() -> None:
    path = CORE0 / "core0.veccore0_code_exe.csv"
    everything = parse_code_exe(path)
    assert (everything.rows, everything.call_count, everything.cycles) == (6, 97, 19_800)
    assert everything.running_time_us == pytest.approx(11.0)
    kernel = parse_code_exe(path, code_filter="op_kernel/")
    assert (kernel.rows, kernel.cycles) == (5, 17_370)
    assert kernel.running_time_us == pytest.approx(9.65)


def test_instr_exe_groups_by_pipe() -> None:
    r = parse_instr_exe(CORE0 / "core0.veccore0_instr_exe.csv")
    assert r.cycles == 19_800
    assert r.pipes["SCALAR"].instructions == 3 and r.pipes["SCALAR"].call_count == 97
    assert r.pipes["VECTOR"].running_time_us == pytest.approx(3.5)


def test_trace_span_and_busy_time_count_complete_events_only() -> None:
    t = parse_trace(OPPROF / "simulator" / "trace.json")
    assert list(t.cores) == ["core0.veccore0", "core0.veccore1", "core1.veccore0"]
    assert t.span_us == pytest.approx(11.6)
    core0 = t.cores["core0.veccore0"]
    assert (core0.start_us, core0.end_us, core0.events) == (pytest.approx(0.4), 12.0, 7)
    # MTE2 [0.5, 2.5] + [4.0, 6.0] ∪ [5.5, 6.5]: the overlap counts once
    assert core0.pipe_busy_us["MTE2"] == pytest.approx(4.5)


def test_device_runs_give_task_durations_and_prof_sum() -> None:
    durations = {c: parse_device(CANN / "device" / c).duration_us() for c in PERF}
    assert durations == pytest.approx(
        {"p01_row_f32": 24.31, "p02_col_f32": 31.655, "p03_full_f32": 18.042}
    )
    assert prof_sum(durations) == pytest.approx(74.007)
    row = parse_device(CANN / "device" / "p02_col_f32").rows[0]  # "Device ID", "PID" spelling
    assert (row.block_dim, row.mix_block_dim, row.device_id, row.pid) == (40, None, 0, 21_901)
    assert row.op_type == "vector" and row.rated_freq == 1800


def test_prof_sum_is_missing_when_any_case_is() -> None:
    assert prof_sum({"a": 1.5, "b": None}) is None
    assert prof_sum({}) is None


# Robustness: variants of the fixture files written the way other CANN versions write them.


def test_bom_crlf_reordered_and_extra_columns_give_the_same_sums(tmp_path: Path) -> None:
    text = (
        "\ufeffcycles,running_time(us),Gpr Count,call_count,code\r\n"
        '7200,4.0,12,16,"/src/op_kernel/a.cpp:74"\r\n'
        '2430,1.35,3,32,"/x/kernel_event.h:112, inlined"\r\n'
    )
    path = tmp_path / "core0.veccore0_code_exe.csv"
    path.write_text(text, encoding="utf-8", newline="")
    r = parse_code_exe(path)
    assert (r.rows, r.cycles, r.call_count) == (2, 9_630, 48)
    assert r.running_time_us == pytest.approx(5.35)
    assert parse_code_exe(path, code_filter="op_kernel/").cycles == 7_200


def test_header_only_code_exe_has_no_figure_and_the_core_falls_back_to_instr(
    tmp_path: Path,
) -> None:
    run = tmp_path / OPPROF.name
    shutil.copytree(OPPROF, run)
    code = run / "simulator" / "core0.veccore0" / "core0.veccore0_code_exe.csv"
    code.write_text("code,call_count,cycles,running_time(us)\n")  # built without -g
    r = parse_simulator(run)
    core0 = r.cores[0]
    assert core0.code is not None and core0.code.cycles is None and core0.code.rows == 0
    assert core0.cycles == 19_800 and core0.cycles_source == "instr_exe"
    assert r.total_cycles == 19_800
    assert r.running_time_us is None  # not 0: one core has no running_time


def test_missing_column_names_the_file_and_the_column(tmp_path: Path) -> None:
    path = tmp_path / "core0.veccore0_instr_exe.csv"
    path.write_text("instr,addr,call_count,cycles\nVADD,1,2,3\n")
    with pytest.raises(CannParseError) as err:
        parse_instr_exe(path)
    assert str(path) in str(err.value) and "'pipe'" in str(err.value)
    path.write_text("Op Name,Op Type,Block Dim\nx,vector,8\n")
    with pytest.raises(CannParseError, match=r"missing column 'Task Duration\(us\)'"):
        parse_op_basic_info(path)


def test_bad_values_are_errors_not_numbers(tmp_path: Path) -> None:
    path = tmp_path / "c_code_exe.csv"
    path.write_text("code,call_count,cycles,running_time(us)\na.cpp:1,1,lots,0.1\n")
    with pytest.raises(CannParseError, match=r"line 2: 'cycles' is 'lots', not a number"):
        parse_code_exe(path)
    path.write_text("code,call_count,cycles,running_time(us)\na.cpp:1,1,,0.1\n")
    with pytest.raises(CannParseError, match="'cycles' is empty"):
        parse_code_exe(path)
    info = tmp_path / "OpBasicInfo.csv"
    info.write_text("Op Name,Task Duration(us)\n")
    with pytest.raises(CannParseError, match="no operator row"):
        parse_op_basic_info(info)
    with pytest.raises(CannParseError, match="file not found"):
        parse_code_exe(tmp_path / "absent.csv")


def test_op_name_filter_and_several_launches(tmp_path: Path) -> None:
    path = tmp_path / "OpBasicInfo.csv"
    path.write_text(
        '"Op Name","Op Type","Task Duration(us)","Block Dim","Mix Block Dim"\n'
        '"ConfusionMulGrad_1_high_performance_1","vector","10.5","40","N/A"\n'
        '"Cast_2","vector","1.25","8","N/A"\n'
    )
    rows = parse_op_basic_info(path)
    assert task_duration_us(rows) == pytest.approx(11.75)
    assert task_duration_us(rows, "ConfusionMulGrad") == pytest.approx(10.5)
    with pytest.raises(CannParseError, match="no OpBasicInfo row"):
        task_duration_us(rows, "Absent")


def test_trace_with_numeric_ids_named_by_metadata(tmp_path: Path) -> None:
    events = [
        {"ph": "M", "name": "process_name", "pid": 3, "args": {"name": "core3.veccore0"}},
        {"ph": "M", "name": "thread_name", "pid": 3, "tid": 1, "args": {"name": "VECTOR"}},
        {"ph": "X", "pid": 3, "tid": 1, "name": "VADD", "ts": 1.0, "dur": 0.5},
        {"ph": "X", "pid": 3, "tid": 2, "name": "MOV", "ts": 2.0, "dur": 1.0},
        {"ph": "B", "pid": 3, "tid": 2, "name": "SET_FLAG", "ts": 9.0},
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(events))  # the bare-list form of the Chrome format
    core = parse_trace(path).cores["core3.veccore0"]
    assert core.span_us == pytest.approx(2.0)
    assert core.pipe_busy_us == {"VECTOR": 0.5, "2": 1.0}


def test_bad_traces_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text('{"traceEvents": [{"ph": "X", "pid": "c", "tid": "V", "name": "VADD"}]}')
    with pytest.raises(CannParseError, match=r"traceEvents\[0\] \(VADD\): bad 'ts'"):
        parse_trace(path)
    path.write_text("{not json")
    with pytest.raises(CannParseError, match="not a JSON trace"):
        parse_trace(path)
    path.write_text('{"events": []}')
    with pytest.raises(CannParseError, match="no 'traceEvents' list"):
        parse_trace(path)


def test_output_folder_must_hold_exactly_one_run(tmp_path: Path) -> None:
    with pytest.raises(CannParseError, match="no OPPROF_"):
        find_opprof(tmp_path)
    (tmp_path / "OPPROF_1_A").mkdir()
    (tmp_path / "OPPROF_2_B").mkdir()
    with pytest.raises(CannParseError, match="2 OPPROF_"):
        find_opprof(tmp_path)
    with pytest.raises(CannParseError, match="no simulator/ folder"):
        parse_simulator(tmp_path / "OPPROF_1_A")
    with pytest.raises(CannParseError, match=r"no OpBasicInfo\.csv"):
        parse_device(tmp_path / "OPPROF_1_A")
