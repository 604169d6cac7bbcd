"""The CANN toolchain end to end: `toolchain_unavailable` where CANN is absent, and the whole
pipeline against stand-ins for what cannot exist here (AGENTS.md: a stand-in only for CANN, and
it speaks the real protocol).

The stand-ins: a toolkit folder around the fixture set_env.sh, an `msprof` that runs the
program it is given and then writes the fixture OPPROF folder into --output (simulator or
device), a project build.sh that packs the kernel sources into a makeself-style
custom_opp_*.run, and an aclnn example (built by real cmake from examples/) that computes
ConfusionMulGrad in plain Python, reading the installed kernel through ASCEND_CUSTOM_OPP_PATH. Real
bash, cmake and make run everything; our code is never replaced.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import CaseOutcome, JobKind, Receipt, Status
from justkernel.operators import CaseSpec, InputPack, build_input_pack
from justkernel.toolchains import ToolchainError
from justkernel.toolchains.cann import CannToolchain
from justkernel.toolchains.cann.run import CannLimits
from tests.toolchains.test_cann_project import TEMPLATE, make_toolkit

CANN = Path(__file__).resolve().parent.parent / "fixtures" / "cann"
PATHS = {"PATH": "/usr/bin:/bin"}


def case(
    cid: str, shapes: tuple[list[int], ...], dtype: str, axes: list[int], keep: bool
) -> CaseSpec:
    return CaseSpec(
        id=cid,
        input0=shapes[0],
        input1=shapes[1],
        input2=shapes[2],
        dtype=dtype,
        axes=axes,
        keep_dims=keep,
        distribution="symmetric",
        seed=7,
    )


LOCAL = (
    case("c01_row_f32", ([4, 37], [4, 37], [4, 37]), "float32", [1], False),
    case("c02_col_keep_f16", ([9, 5], [9, 5], [9, 5]), "float16", [0], True),
    case("c03_bcast_all_f32", ([1, 6], [3, 6], [3, 1]), "float32", [], False),
)
PERF = tuple(  # ids of the device fixtures (tests/fixtures/cann/device/<id>/)
    case(cid, ([8, 16], [8, 16], [8, 16]), "float32", [1], False)
    for cid in ("p01_row_f32", "p02_col_f32", "p03_full_f32")
)

MSPROF = """#!/bin/bash
# Stand-in for CANN's msprof: msprof op [simulator] --opt=value... program args...
[ "$1" = op ] || exit 64
shift
sim=0
if [ "$1" = simulator ]; then sim=1; shift; fi
while [[ "$1" == --* ]]; do
  case "$1" in --output=*) out="${1#--output=}";; --soc-version=*) soc="${1#--soc-version=}";; esac
  shift
done
if [ $sim = 1 ]; then
  case ":$LD_LIBRARY_PATH:" in
    *"/tools/simulator/$soc/lib:"*) ;;
    *) echo "simulator library not on LD_LIBRARY_PATH" >&2; exit 65;;
  esac
fi
"$@" || exit $?
if [ $sim = 1 ]; then src=FIXTURES/simulator; else src=FIXTURES/device/$(basename "$2"); fi
run=$(ls -d "$src"/OPPROF_* | head -n 1)
cp -r "$run" "$out/"
echo "[INFO] Profiling results saved in $out/$(basename "$run")"
"""

BUILD_SH = """#!/bin/bash
# Stand-in for msopgen's build.sh: packs the kernel sources into a self-installing .run.
set -e
test -n "$ASCEND_HOME_PATH"                       # set_env.sh was applied
grep -q "$ASCEND_HOME_PATH" CMakePresets.json     # the presets point at this toolkit
if grep -q JK_STANDIN_BROKEN op_kernel/*.cpp; then
  echo "op_kernel/confusion_mul_grad.cpp:3:1: error: expected ';' after class" >&2
  exit 1
fi
rm -rf build_out && mkdir -p build_out/payload
cp op_kernel/*.cpp build_out/payload/
cat > build_out/custom_opp_ubuntu_x86_64.run <<'EOS'
#!/bin/bash
set -e
here=$(cd "$(dirname "$0")" && pwd)
for arg in "$@"; do case "$arg" in --install-path=*) dest="${arg#--install-path=}";; esac; done
vendor="$dest/vendors/customize"
mkdir -p "$vendor/op_api/lib" "$vendor/op_impl/ai_core/tbe/kernel"
cp "$here"/payload/*.cpp "$vendor/op_impl/ai_core/tbe/kernel/"
echo "SUCCESS: custom op package installed to $vendor"
EOS
echo "built build_out/custom_opp_ubuntu_x86_64.run"
"""

EXAMPLE_CMAKE = """cmake_minimum_required(VERSION 3.16)
project(test_aclnn_confusion_mul_grad NONE)
if(NOT IS_DIRECTORY "${CUSTOM_OPP_PATH}/op_api/lib")
  message(FATAL_ERROR "the custom op package is not installed at ${CUSTOM_OPP_PATH}")
endif()
file(COPY ${CMAKE_CURRENT_SOURCE_DIR}/test_aclnn_confusion_mul_grad DESTINATION ${CMAKE_BINARY_DIR}
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
"""

EXAMPLE = """#!{python}
# Stand-in for the aclnn example: <case_dir> <out_dir>. The "device" is plain Python (float64
# sums, rounded once by struct), which starts faster than numpy.
import itertools, os, struct, sys
from pathlib import Path
case_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
facts = {{}}
for line in (case_dir / "case.txt").read_text().splitlines():
    facts[line.split()[0]] = line.split()[1:]
code = {{"float32": "f", "float16": "e"}}[facts["dtype"][0]]
def shape(key):
    return tuple(int(v) for v in facts[key][1:])
def load(i):
    data = (case_dir / f"input{{i}}.bin").read_bytes()
    count = len(data) // struct.calcsize(code)
    return struct.unpack(f"<{{count}}{{code}}", data), shape(f"input{{i}}")
def broadcast(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b))
def at(values, shp, index):
    flat = 0
    for i, n in zip(index[len(index) - len(shp):], shp):
        flat = flat * n + (i if n > 1 else 0)
    return values[flat]
(x0, s0), (x1, s1), (x2, s2) = load(0), load(1), load(2)
out0 = [at(x0, s0, i) * at(x1, s1, i) for i in itertools.product(*map(range, broadcast(s0, s1)))]
p = broadcast(s1, s2)
axes = {{a % len(p) for a in map(int, facts["axes"][1:])}} or set(range(len(p)))
sums = {{}}
for i in itertools.product(*map(range, p)):
    key = tuple(0 if d in axes else v for d, v in enumerate(i))
    sums[key] = sums.get(key, 0.0) + at(x1, s1, i) * at(x2, s2, i)
out1 = [sums[k] for k in sorted(sums)]
kernel_dir = Path(os.environ["ASCEND_CUSTOM_OPP_PATH"].split(":")[0]) / "op_impl/ai_core/tbe/kernel"
if any("JK_STANDIN_WRONG" in p.read_text() for p in kernel_dir.glob("*.cpp")):
    out1 = [v + 1.0 for v in out1]
for name, values in (("output0.bin", out0), ("output1.bin", out1)):
    (out_dir / name).write_bytes(struct.pack(f"<{{len(values)}}{{code}}", *values))
"""


@pytest.fixture(scope="module")
def packs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, InputPack]:
    root = tmp_path_factory.mktemp("cann-packs")
    return {
        "local": build_input_pack(LOCAL, root / "local"),
        "perf": build_input_pack(PERF, root / "perf"),
    }


def standin_toolkit(root: Path) -> Path:
    home = make_toolkit(root, msprof=False, simulator=True)
    msprof = home / "bin" / "msprof"
    msprof.write_text(MSPROF.replace("FIXTURES", shlex.quote(str(CANN))))
    msprof.chmod(0o755)
    return home


def standin_project(root: Path, kernel_marker: str = "") -> Path:
    project = root / "project"
    shutil.copytree(TEMPLATE, project)
    (project / "build.sh").write_text(BUILD_SH)
    (project / "examples" / "CMakeLists.txt").write_text(EXAMPLE_CMAKE)
    example = project / "examples" / "test_aclnn_confusion_mul_grad"
    example.write_text(EXAMPLE.format(python=sys.executable))
    example.chmod(0o755)
    if kernel_marker:
        kernel = project / "op_kernel" / "confusion_mul_grad.cpp"
        kernel.write_text(f"// {kernel_marker}\n" + kernel.read_text())
    return project


def spec_for(
    tc: CannToolchain, project: Path, packs: dict[str, InputPack], kind: JobKind
) -> JobSpec:
    full = kind is JobKind.FULL
    return JobSpec(
        operator="confusion_mul_grad",
        kind=kind,
        case_ids=packs["local"].case_ids,
        perf_case_ids=packs["perf"].case_ids if full else (),
        source_tree_hash=tc.inspect(project).tree_hash,
        input_packs={r: p.pack_hash for r, p in packs.items() if full or r == "local"},
        toolchain_id=tc.id,
        toolchain_version=tc.version,
    )


async def run(
    tc: CannToolchain, project: Path, packs: dict[str, InputPack], kind: JobKind, work: Path
) -> Receipt:
    return await tc.run(spec_for(tc, project, packs, kind), project, packs, work, slot=0)


def log_text(receipt: Receipt, work: Path, name: str) -> str:
    ref = next(r for r in receipt.all_logs() if r.name == name)
    return (work / "logs" / ref.sha256).read_text()


async def test_without_cann_the_receipt_names_what_is_missing(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    project = standin_project(tmp_path)
    (project / "build.sh").unlink()
    tc = CannToolchain(ascend_home=tmp_path / "no-toolkit", environ=PATHS)
    assert tc.version.startswith("cann-absent-") and tc.version_info()["cann_version"] is None
    receipt = await run(tc, project, packs, JobKind.FULL, tmp_path / "work")
    assert receipt.status is Status.TOOLCHAIN_UNAVAILABLE and not receipt.status.passed
    assert receipt.detail.startswith("CANN toolchain unavailable, missing: CANN toolkit")
    for piece in ("set_env.sh", "msprof", "simulator for Ascend910B4", "build.sh (project)"):
        assert piece in receipt.detail
    assert receipt.compile is not None and receipt.compile.failed_step == "toolchain"
    assert "build.sh (project)" in receipt.compile.problems
    assert receipt.cases == [] and receipt.cycles == [] and receipt.total_est_cycles is None
    assert not receipt.cacheable and receipt.executor.toolchain_id == "cann"


async def test_a_missing_example_binary_is_named(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    home = standin_toolkit(tmp_path)
    tc = CannToolchain(ascend_home=home, example=tmp_path / "absent-example", environ=PATHS)
    receipt = await run(tc, standin_project(tmp_path), packs, JobKind.PROBE, tmp_path / "work")
    assert receipt.status is Status.TOOLCHAIN_UNAVAILABLE
    assert receipt.detail.endswith(
        f"aclnn example binary {tmp_path / 'absent-example'} (not an executable file)"
    )


async def test_simulated_full_job_is_measured_with_the_fixture_figures(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    tc = CannToolchain(ascend_home=standin_toolkit(tmp_path), environ=PATHS)
    assert tc.version.startswith("cann8.0.RC3-") and not tc.missing()
    project, work = standin_project(tmp_path), tmp_path / "work"
    receipt = await run(tc, project, packs, JobKind.FULL, work)
    assert receipt.status is Status.MEASURED, receipt.detail
    assert [c.case_id for c in receipt.cases] == [c.id for c in LOCAL]
    assert all(c.passed and c.outcome is CaseOutcome.PASSED for c in receipt.cases)
    assert [c.est_cycles for c in receipt.cycles] == [19_800, 19_800, 19_800]
    assert all(c.check.passed and c.counters is None for c in receipt.cycles)
    assert receipt.total_est_cycles == 59_400
    assert receipt.detail == (
        "3 cases passed; 59,400 simulated cycles over 3 perf cases (max over cores); "
        "simulated duration sum 34.800 us"
    )
    summary = json.loads(log_text(receipt, work, "p01_row_f32.msprof.json"))
    assert summary["mode"] == "simulator" and summary["duration_us"] == 11.6
    assert summary["sum_cycles"] == 50_400 and summary["slowest_core"] == "core0.veccore0"
    assert "SUCCESS: custom op package installed" in log_text(receipt, work, "install.log")
    assert "$ " in log_text(receipt, work, "example-build.log")
    assert receipt.cacheable and receipt.executor.toolchain_version == tc.version
    d = receipt.durations
    assert d.static_check is not None and d.compile and d.functional and d.simulate and d.total
    assert not (project / "build_out").exists()  # the candidate's folder is never touched


async def test_device_mode_reports_task_durations_and_prof_sum(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    home = standin_toolkit(tmp_path)
    tc = CannToolchain(ascend_home=home, mode="device", environ=PATHS)
    work = tmp_path / "work"
    receipt = await run(tc, standin_project(tmp_path), packs, JobKind.FULL, work)
    assert receipt.status is Status.MEASURED, receipt.detail
    assert receipt.detail == "3 cases passed; prof_sum 74.007 us (Task Duration, device)"
    assert [c.est_cycles for c in receipt.cycles] == [None, None, None]  # a device counts time
    assert receipt.total_est_cycles is None
    summary = json.loads(log_text(receipt, work, "p02_col_f32.msprof.json"))
    assert summary["duration_us"] == 31.655 and summary["rows"][0]["block_dim"] == 40
    assert not receipt.cacheable  # device timing is noisy: never served from the cache


async def test_wrong_outputs_are_incorrect_against_the_golden(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    tc = CannToolchain(ascend_home=standin_toolkit(tmp_path), environ=PATHS)
    project = standin_project(tmp_path, "JK_STANDIN_WRONG")
    receipt = await run(tc, project, packs, JobKind.PROBE, tmp_path / "work")
    assert receipt.status is Status.INCORRECT
    assert {c.case_id for c in receipt.cases if not c.passed} == {c.id for c in LOCAL}
    first = receipt.cases[0]
    assert [o.passed for o in first.outputs] == [True, False]
    assert first.outputs[1].max_abs_error == pytest.approx(1.0)
    assert receipt.cacheable


async def test_a_build_failure_is_compile_failed_with_the_diagnostics(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    tc = CannToolchain(ascend_home=standin_toolkit(tmp_path), environ=PATHS)
    project = standin_project(tmp_path, "JK_STANDIN_BROKEN")
    receipt = await run(tc, project, packs, JobKind.PROBE, tmp_path / "work")
    assert receipt.status is Status.COMPILE_FAILED
    assert receipt.detail == "build.sh: exit 1"
    assert receipt.compile is not None and receipt.compile.failed_step == "build"
    assert receipt.compile.diagnostics_head == [
        "op_kernel/confusion_mul_grad.cpp:3:1: error: expected ';' after class"
    ]
    assert receipt.cases == [] and receipt.cacheable


async def test_a_crashing_example_and_a_timeout(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    home = standin_toolkit(tmp_path)
    crash = tmp_path / "crash"
    crash.write_text("#!/bin/bash\necho 'aclnnConfusionMulGrad failed: 561103' >&2\nexit 4\n")
    crash.chmod(0o755)
    tc = CannToolchain(ascend_home=home, example=crash, environ=PATHS)
    receipt = await run(tc, standin_project(tmp_path), packs, JobKind.PROBE, tmp_path / "w1")
    assert receipt.status is Status.CRASHED
    assert receipt.cases[0].detail == "exit 4: aclnnConfusionMulGrad failed: 561103"
    assert receipt.cases[0].logs[0].name == "c01_row_f32.stderr"
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/bash\nsleep 30\n")
    slow.chmod(0o755)
    tc = CannToolchain(ascend_home=home, example=slow, environ=PATHS, limits=CannLimits(case=0.5))
    receipt = await run(tc, standin_project(tmp_path / "b"), packs, JobKind.PROBE, tmp_path / "w2")
    assert receipt.status is Status.TIMEOUT and not receipt.cacheable
    assert [c.outcome for c in receipt.cases] == [
        CaseOutcome.TIMEOUT,
        CaseOutcome.NOT_RUN,
        CaseOutcome.NOT_RUN,
    ]


async def test_the_template_guards_the_read_only_files(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    tc = CannToolchain(ascend_home=standin_toolkit(tmp_path), template=TEMPLATE, environ=PATHS)
    receipt = await run(tc, standin_project(tmp_path), packs, JobKind.PROBE, tmp_path / "work")
    assert receipt.status is Status.STATIC_CHECK_FAILED and not receipt.cacheable
    assert receipt.compile is not None
    assert receipt.compile.problems == [
        "read-only file build.sh differs from the template",
        "read-only file examples/CMakeLists.txt differs from the template",
        "extra file examples/test_aclnn_confusion_mul_grad (not in the template)",
    ]


async def test_specs_for_another_tree_or_toolchain_are_refused(
    tmp_path: Path, packs: dict[str, InputPack]
) -> None:
    tc = CannToolchain(ascend_home=standin_toolkit(tmp_path), environ=PATHS)
    project = standin_project(tmp_path)
    spec = spec_for(tc, project, packs, JobKind.PROBE)
    kernel = project / "op_kernel" / "confusion_mul_grad.cpp"
    kernel.write_text(kernel.read_text() + "// edited after the spec\n")
    with pytest.raises(ToolchainError, match="not the one the spec names"):
        await tc.run(spec, project, packs, tmp_path / "w1", slot=0)
    other = spec.model_copy(update={"toolchain_version": "cann8.0.RC3-0000000000000000"})
    with pytest.raises(ToolchainError, match="spec is for cann"):
        await tc.run(other, project, packs, tmp_path / "w2", slot=0)
    with pytest.raises(ValueError, match="mode must be"):
        CannToolchain(mode="emulator")  # type: ignore[arg-type]
