"""Candidate bundles: what leaves the lab is exactly the editable source of its target, hashed
like a receipt, both upload formats arrive as the same files, and a bundle names its target:
files of the other target's project, unknown or refused toolchains are refused clearly."""

from __future__ import annotations

import os

import pytest

from justkernel.core.targets import DEFAULT_TOOLCHAIN
from justkernel.evaluation.protocol import CandidateBundle
from justkernel.evaluation.submission_files import BundleError, decode_bundle, encode_bundle
from justkernel.operators import load_operator
from justkernel.toolchains import check_tree
from tests.support.judge import ascendc_bundle, bundle, project

ASCENDC_SOURCES = [
    "op_host/confusion_mul_grad.cpp",
    "op_host/confusion_mul_grad_tiling.h",
    "op_kernel/confusion_mul_grad.cpp",
]


def test_a_bundle_holds_the_editable_files_with_the_receipt_hash() -> None:
    definition = load_operator()
    folder = project("fast_fused_blocked")
    (folder / "build").mkdir()
    (folder / "build" / "harness").write_bytes(b"\x7fELF")
    (folder / "op_kernel" / "helper.h").write_text("#define X 1\n")
    os.symlink("/etc/passwd", folder / "op_kernel" / "link.h")  # never followed into it
    b = CandidateBundle.from_project(
        folder, definition, toolchain="cpu", team="blue", candidate_id="c1"
    )
    assert sorted(b.files) == [
        "op_host/cmg_tiling.c",
        "op_kernel/cmg_kernel.c",
        "op_kernel/helper.h",
    ]
    assert b.source_sha256 == check_tree(folder, definition).tree_hash
    assert "#define" not in repr(b)  # the source stays out of logs
    assert b.to_zip() == b.to_zip()  # fixed timestamps: the same source, the same archive
    for upload in ("zip", "files"):
        body = encode_bundle(b, upload=upload)
        assert body["toolchain"] == "cpu"
        decoded = decode_bundle(body, definition)
        assert decoded.files == dict(b.files)
        assert decoded.source_sha256 == b.source_sha256
        assert decoded.client == {"team": "blue", "candidate_id": "c1", "note": ""}
        assert decoded.toolchain == "cpu"


def test_an_ascendc_bundle_holds_the_msopgen_sources_and_is_the_default_target() -> None:
    definition = load_operator()
    view = definition.for_toolchain("ascendc-cpu")
    b = ascendc_bundle()
    assert sorted(b.files) == ASCENDC_SOURCES  # CMakeLists.txt, build.sh... are the template's
    assert b.source_sha256 == check_tree(view.project_dir, view).tree_hash
    body = encode_bundle(b)
    assert decode_bundle(body, definition).toolchain == "ascendc-cpu"
    del body["toolchain"]  # a body naming no target is an Ascend C submission
    assert DEFAULT_TOOLCHAIN == "ascendc-cpu"
    assert decode_bundle(body, definition).toolchain == "ascendc-cpu"


@pytest.mark.parametrize(
    ("toolchain", "files", "message"),
    [
        # C port sources named as Ascend C (or the reverse): they sit in editable folders of
        # both projects, the build would ignore them and judge the template instead
        ("ascendc-cpu", "cpu", "op_host/cmg_tiling.c: a file of the cpu project"),
        ("cpu", "ascendc-cpu", "op_host/confusion_mul_grad.cpp: a file of the ascendc project"),
        ("cann", "ascendc-cpu", "this judge evaluates ascendc-cpu, cpu only; it builds with"),
        ("gcc", "cpu", "toolchain 'gcc': expected one of ascendc-cpu, cpu, cann"),
    ],
)
def test_a_bundle_for_the_wrong_target_is_refused(toolchain: str, files: str, message: str) -> None:
    definition = load_operator()
    source = bundle() if files == "cpu" else ascendc_bundle()
    b = CandidateBundle.create(source.operator, source.files, toolchain=toolchain)
    with pytest.raises(BundleError) as caught:
        decode_bundle(encode_bundle(b), definition, toolchains=("ascendc-cpu", "cpu"))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"op_host/CMakeLists.txt": b"x"}, "fixed by the operator"),
        ({"op_kernel/CMakeLists.txt": b"x"}, "fixed by the operator"),
        ({"CMakeLists.txt": b"x"}, "not an editable file (only op_host/**, op_kernel/**)"),
        ({"build.sh": b"rm -rf /"}, "not an editable file"),
        ({"op_kernel/../build.sh": b"x"}, "'..'"),
        ({"op_kernel/confusion_mul_grad.cpp": b"x" * ((1 << 20) + 1)}, "over 1048576"),
    ],
)
def test_ascendc_paths_outside_the_editable_set_and_oversize_files_are_refused(
    files: dict[str, bytes], message: str
) -> None:
    b = CandidateBundle.create("confusion_mul_grad", files, toolchain="ascendc-cpu")
    for upload in ("files", "zip"):
        with pytest.raises(BundleError) as caught:
            decode_bundle(encode_bundle(b, upload=upload), load_operator())
        assert message in str(caught.value), (upload, str(caught.value))
