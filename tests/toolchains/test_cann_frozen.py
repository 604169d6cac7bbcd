"""A candidate frozen on `ascendc-cpu` is accepted byte for byte by the `cann` toolchain (issue 14,
point 6 and its Must show).

The whole path a user takes, with our parts real: a team's Ascend C project (the baseline with an
edited kernel that includes an added op_kernel/team_tuning.h) is evaluated by the real evaluator on
`ascendc-cpu` to a measured receipt; its editable files are frozen in a real lab store as the
scheduler's handoff freezes them, and the Judger's review (rebuild, re-hash, tree policy)
accepts them. On the "CANN host", `tools/import_official_template.py` imports the official
template (a zip of the stand-in, verified by the shipped manifest) and lays the frozen bytes
over it (`--candidate RUN/CAND --into DEST`), and the same evaluator, switched to
`CannToolchain`, measures that folder.

Only CANN is a stand-in (AGENTS.md): the fixture toolkit's set_env.sh, a `cmake` that records
the SHA-256 of every project file build.sh runs it in (test_cann_parity), an `msprof` that runs
the program and writes the fixture simulator profile (test_cann_toolchain), and an aclnn example
computing ConfusionMulGrad with numpy (the perf shapes are 4M elements). The template's own
build.sh runs unchanged under real bash.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

from justkernel.core.receipts import JobKind, Receipt, Status
from justkernel.judger.review import review_candidate
from justkernel.lab import open_lab
from justkernel.official_template import describe, load_manifest, manifest_path
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.toolchains import check_tree
from justkernel.toolchains.cann import CannToolchain
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.pool import LocalPool
from tests.toolchains.ascendc_cpu.ladder_support import toolchain
from tests.toolchains.ascendc_cpu.test_cann_parity import CMAKE, received
from tests.toolchains.ascendc_cpu.toolchain_support import copy_template
from tests.toolchains.test_cann_project import make_toolkit
from tests.toolchains.test_cann_toolchain import MSPROF, PATHS
from tests.workers.test_evaluator_shared import evaluator, fresh_dir, shared_settings

ROOT = Path(__file__).resolve().parents[2]
CANN = ROOT / "tests" / "fixtures" / "cann"
OFFICIAL = ROOT / "tests" / "fixtures" / "official_template" / "confusion_mul_grad"
TOOL = ROOT / "tools" / "import_official_template.py"
PRESETS = "CMakePresets.json"  # the cann toolchain points its private copy at the toolkit
KERNEL = "op_kernel/confusion_mul_grad.cpp"
ADDED = "op_kernel/team_tuning.h"

EXAMPLE = """#!{python}
# Stand-in for the aclnn example: <case_dir> <out_dir>, ConfusionMulGrad in numpy (float64).
import sys
from pathlib import Path
import numpy as np
case_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
facts = {{}}
for line in (case_dir / "case.txt").read_text().splitlines():
    facts[line.split()[0]] = line.split()[1:]
dtype = {{"float32": np.float32, "float16": np.float16}}[facts["dtype"][0]]
def load(i):
    shape = tuple(int(v) for v in facts[f"input{{i}}"][1:])
    data = np.fromfile(case_dir / f"input{{i}}.bin", dtype=dtype).astype(np.float64)
    return data.reshape(shape)
x0, x1, x2 = load(0), load(1), load(2)
prod = x1 * x2
axes = tuple(int(a) % prod.ndim for a in facts["axes"][1:]) or tuple(range(prod.ndim))
(x0 * x1).astype(dtype).tofile(out_dir / "output0.bin")
prod.sum(axis=axes).astype(dtype).tofile(out_dir / "output1.bin")
"""


def team_workspace() -> Path:
    """A team's edit: the kernel includes a header of its own (a file the template lacks)."""
    project = copy_template("cann-frozen-team")
    (project / ADDED).write_text("// team-a's tuning notes\n#pragma once\n")
    kernel = project / KERNEL
    kernel.write_text(f'#include "{Path(ADDED).name}"\n' + kernel.read_text())
    return project


def cann_host(root: Path) -> tuple[Path, Path]:
    """(ASCEND_HOME_PATH with the stand-in cmake and msprof, the stand-in aclnn example)."""
    home = make_toolkit(root, msprof=False, simulator=True)
    for name, text in (
        ("cmake", CMAKE),
        ("msprof", MSPROF.replace("FIXTURES", shlex.quote(str(CANN)))),
    ):
        (home / "bin" / name).write_text(text)
        (home / "bin" / name).chmod(0o755)
    example = root / "test_aclnn_confusion_mul_grad"
    example.write_text(EXAMPLE.format(python=sys.executable))
    example.chmod(0o755)
    return home, example


def tool(*args: str, data_dir: Path) -> str:
    env = {**os.environ, "JUSTKERNEL_DATA_DIR": str(data_dir)}
    done = subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def official_zip(path: Path) -> Path:
    """The organisers' zip, as it would arrive: one top-level folder."""
    with zipfile.ZipFile(path, "w") as z:
        for rel in describe(OFFICIAL):
            info = zipfile.ZipInfo(f"ConfusionMulGrad/{rel}")
            info.external_attr = (0o100755 if rel.endswith(".sh") else 0o100644) << 16
            z.writestr(info, (OFFICIAL / rel).read_bytes())
    return path


async def evaluate_on(tc: CannToolchain, project: Path, settings: Settings) -> Receipt:
    """The lab's evaluator, switched to the cann toolchain (nothing else changes)."""
    ev = Evaluator(settings, LocalPool(slots=1), tc, BlobStore(settings.blobs_dir))
    try:
        return await ev.evaluate(project, team="team-a", kind=JobKind.FULL)
    finally:
        await ev.pool.close()


async def test_a_frozen_ascendc_cpu_candidate_is_measured_by_cann_byte_for_byte() -> None:
    ascendc = toolchain()
    workspace = team_workspace()
    policy = ascendc.definition.paths
    files = {  # what TeamContext.evaluate hands to the freeze: the editable files as evaluated
        p.relative_to(workspace).as_posix(): p.read_bytes()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and policy.access(p.relative_to(workspace).as_posix()) == "editable"
    }
    assert ADDED in files and KERNEL in files
    ev = evaluator(slots=1, tc=ascendc, sim_parallelism=2)  # type: ignore[arg-type]
    try:
        measured = await ev.evaluate(workspace, team="team-a", kind=JobKind.FULL)
    finally:
        await ev.pool.close()
    assert measured.status is Status.MEASURED, measured.detail
    assert measured.executor.toolchain_id == "ascendc-cpu"

    # the lab: freeze as the scheduler's handoff does, review as the Judger does
    root = fresh_dir("cann-frozen")
    lab = await open_lab(Settings(data_dir=root / "lab", config_dir=root / "config"))
    try:
        run = await lab.runs.create("frozen-to-cann")
        candidate, new = await lab.candidates.freeze(run.id, "team-a", files, measured, None)
        frozen = lab.candidates.files(candidate)
    finally:
        await lab.close()
    assert new and frozen == files and candidate.source_sha256 == measured.source_sha256
    review = review_candidate(frozen, candidate.source_sha256, measured, ascendc.definition)
    assert review.verdict == "accepted", review.reasons

    # the CANN host: import the official template, lay the frozen bytes over it
    imported = tool("--zip", str(official_zip(root / "official.zip")), data_dir=root / "lab")
    assert "10 files verified" in imported
    dest = root / "cann-host" / "project"
    laid = tool(
        "--candidate", f"{run.id}/{candidate.id}", "--into", str(dest), data_dir=root / "lab"
    )
    assert f"source {candidate.source_sha256}" in laid
    template = root / "lab" / "templates" / "confusion_mul_grad"
    manifest = load_manifest(manifest_path())
    on_host = describe(dest)
    assert {r: on_host[r] for r in manifest.files} == manifest.files  # the official build files
    assert {r: (dest / r).read_bytes() for r in set(on_host) - set(manifest.files)} == files

    home, example = cann_host(root)
    cann = CannToolchain(ascend_home=home, template=template, example=example, environ=PATHS)
    assert not cann.missing(), cann.missing()
    inspected = cann.inspect(dest)
    assert inspected.ok, (inspected.missing, inspected.problems)  # the cann tree check
    assert inspected.tree_hash == candidate.source_sha256  # one hash on both targets
    assert check_tree(dest, cann.definition).tree_hash == candidate.source_sha256

    settings = shared_settings()  # the same input packs the ascendc-cpu job used
    receipt = await evaluate_on(cann, dest, settings)
    assert receipt.status is Status.MEASURED, receipt.detail
    assert receipt.source_sha256 == candidate.source_sha256
    assert receipt.input_packs == measured.input_packs
    assert receipt.executor.toolchain_id == "cann" and receipt.total_est_cycles == 3 * 19_800
    assert [c.case_id for c in receipt.cases] == [c.case_id for c in measured.cases]

    seen = received(home)  # what build.sh's cmake ran on: every file, nothing generated
    assert set(seen) == set(on_host)
    assert {r: d for r, d in seen.items() if r != PRESETS} == {
        r: e.sha256 for r, e in on_host.items() if r != PRESETS
    }
    assert seen["build.sh"] == manifest.files["build.sh"].sha256  # build.sh ran unchanged
    assert describe(dest) == on_host  # and nobody touched the folder
