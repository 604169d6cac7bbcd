"""Candidate bundles: what leaves the lab is exactly the editable source, hashed like a receipt,
and both upload formats arrive as the same files."""

from __future__ import annotations

import os

from justkernel.evaluation.protocol import CandidateBundle
from justkernel.evaluation.submission_files import decode_bundle, encode_bundle
from justkernel.operators import load_operator
from justkernel.toolchains import check_tree
from tests.support.judge import project


def test_a_bundle_holds_the_editable_files_with_the_receipt_hash() -> None:
    definition = load_operator()
    folder = project("fast_fused_blocked")
    (folder / "build").mkdir()
    (folder / "build" / "harness").write_bytes(b"\x7fELF")
    (folder / "op_kernel" / "helper.h").write_text("#define X 1\n")
    os.symlink("/etc/passwd", folder / "op_kernel" / "link.h")  # never followed into it
    b = CandidateBundle.from_project(folder, definition, team="blue", candidate_id="c1")
    assert sorted(b.files) == [
        "op_host/cmg_tiling.c",
        "op_kernel/cmg_kernel.c",
        "op_kernel/helper.h",
    ]
    assert b.source_sha256 == check_tree(folder, definition).tree_hash
    assert "#define" not in repr(b)  # the source stays out of logs
    assert b.to_zip() == b.to_zip()  # fixed timestamps: the same source, the same archive
    for upload in ("zip", "files"):
        decoded = decode_bundle(encode_bundle(b, upload=upload), definition)
        assert decoded.files == dict(b.files)
        assert decoded.source_sha256 == b.source_sha256
        assert decoded.client == {"team": "blue", "candidate_id": "c1", "note": ""}
