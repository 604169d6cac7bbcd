"""The folder ascendc-cpu evaluates goes unchanged to the `cann` toolchain: accepted against the
official template, built by its own build.sh, and build.sh's cmake sees byte for byte the files
ascendc-cpu judged (issue 12, Must show).

The CANN pieces are stand-ins (AGENTS.md: only for what cannot exist here): the fixture
toolkit's set_env.sh, and a `cmake` in its bin/ that, as msopgen's build.sh drives it, records
the SHA-256 of every file of the project it runs in and packs the kernel sources into a
custom_opp .run; the aclnn example is the Python stand-in of the CANN toolchain tests. The
project's build.sh, presets and CMakeLists.txt are the template's own, run by real bash.
"""

from __future__ import annotations

import sys
from pathlib import Path

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import JobKind, Status
from justkernel.toolchains import check_tree
from justkernel.toolchains.cann import CannToolchain
from justkernel.toolchains.cann.project import file_digests
from justkernel.toolchains.tree import template_files
from tests.toolchains.ascendc_cpu.ladder_support import toolchain
from tests.toolchains.ascendc_cpu.toolchain_support import baseline_receipt
from tests.toolchains.test_cann_project import make_toolkit
from tests.toolchains.test_cann_toolchain import BUILD_SH, EXAMPLE, PATHS
from tests.workers.test_evaluator_shared import SMALL_CASE, fresh_dir, packs

OFFICIAL = Path(__file__).resolve().parents[2] / "fixtures" / "official_template"
OFFICIAL = OFFICIAL / "confusion_mul_grad"
PRESETS = "CMakePresets.json"  # the cann toolchain points its copy at the toolkit (by design)

# The self-installing package the CANN toolchain tests' build.sh stand-in makes, reused.
RUN_PACKAGE = BUILD_SH.split("<<'EOS'\n", 1)[1].split("EOS\n", 1)[0]
CMAKE_TEMPLATE = """#!/bin/bash
# Stand-in for cmake as msopgen's build.sh calls it: `--preset=default` records every file of
# the project (build_out/ aside), `--build build_out --target package` makes the .run package.
received="$(cd "$(dirname "$0")/.." && pwd)/received"
case "$1" in
  --preset=*)
    mkdir -p "$received" build_out
    find . -path ./build_out -prune -o -type f -print | LC_ALL=C sort | while read -r f; do
      sha256sum "$f"
    done > "$received/files.sha256"
    exit 0;;
  --build)
    [ "$4" = package ] || exit 0
    mkdir -p build_out/payload
    cp op_kernel/*.cpp build_out/payload/
    cat > build_out/custom_opp_ubuntu_x86_64.run <<'EOS'
{run_package}EOS
    exit 0;;
esac
echo "stand-in cmake: unexpected arguments $*" >&2
exit 64
"""
CMAKE = CMAKE_TEMPLATE.replace("{run_package}", RUN_PACKAGE)


def standin_cann(root: Path) -> tuple[Path, Path]:
    """(ASCEND_HOME_PATH with the stand-in cmake, the stand-in aclnn example)."""
    home = make_toolkit(root, msprof=True, simulator=True)
    (home / "bin" / "cmake").write_text(CMAKE)
    (home / "bin" / "cmake").chmod(0o755)
    example = root / "test_aclnn_confusion_mul_grad"
    example.write_text(EXAMPLE.format(python=sys.executable))
    example.chmod(0o755)
    return home, example


def received(home: Path) -> dict[str, str]:
    lines = (home / "received" / "files.sha256").read_text().splitlines()
    return {path.removeprefix("./"): digest for digest, path in (ln.split(None, 1) for ln in lines)}


async def test_the_ascendc_cpu_folder_goes_unchanged_to_the_cann_toolchain() -> None:
    ascendc = toolchain()
    project = ascendc.definition.project_dir  # the template itself, as ascendc-cpu judged it
    evaluated = await baseline_receipt()
    assert evaluated.status is Status.MEASURED, evaluated.detail
    before = file_digests(project)

    root = fresh_dir("cann-parity")
    home, example = standin_cann(root)
    cann = CannToolchain(ascend_home=home, template=OFFICIAL, example=example, environ=PATHS)
    assert not cann.missing(), cann.missing()
    inspected = cann.inspect(project)
    assert inspected.ok, (inspected.missing, inspected.problems)  # the official read-only files
    assert inspected.tree_hash == evaluated.source_sha256  # the same editable files, one hash

    local = (await packs(JobKind.PROBE))["local"]
    spec = JobSpec(
        operator="confusion_mul_grad",
        kind=JobKind.PROBE,
        case_ids=(SMALL_CASE,),
        source_tree_hash=inspected.tree_hash,
        input_packs={"local": local.pack_hash},
        toolchain_id=cann.id,
        toolchain_version=cann.version,
    )
    r = await cann.run(spec, project, {"local": local}, root / "work", slot=0)
    assert r.status is Status.PROBE_PASSED, r.detail

    seen = received(home)
    assert set(seen) == set(before)  # every file reached build.sh; nothing added or dropped
    for rel, digest in before.items():
        if rel != PRESETS:
            assert seen[rel] == digest, rel
    assert seen[PRESETS] != before[PRESETS]  # pointed at the toolkit by the cann toolchain
    judged = check_tree(project, ascendc.definition)
    assert judged.ok and judged.tree_hash == evaluated.source_sha256
    assert {rel: seen[rel] for rel in judged.editable} == judged.editable
    assert template_files(ascendc.definition) == before  # what ascendc-cpu holds fixed
    assert file_digests(project) == before  # and neither toolchain touched the folder
