"""Input packs: layout, stable content hash, cache reuse, tamper detection."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from justkernel.operators import (
    InputPack,
    OperatorDefinition,
    PackError,
    build_input_pack,
    case_set_key,
    compute_golden,
    ensure_input_pack,
    generate_inputs,
    input_pack_hash,
    load_input_pack,
    local_cases,
    read_raw,
    verify_input_pack,
)

# The local case set's pack hash. It changes only when a case definition, the input generator or
# the golden changes; if you changed one on purpose, bump GENERATOR_VERSION and update this pin.
LOCAL_PACK_HASH = "04451197fc6f215fa0ada8225b1eea2a7efd662a93075c3d1d733b4e2c0f2ef3"


def test_local_pack_hash_is_pinned(local_pack: InputPack) -> None:
    assert local_pack.pack_hash == LOCAL_PACK_HASH


def test_layout_and_manifest(local_pack: InputPack, definition: OperatorDefinition) -> None:
    assert local_pack.case_ids == tuple(c.id for c in local_cases(definition))
    case_id = "c14_bcast3d_f16"
    case = local_pack.entry(case_id).case
    case_dir, golden_dir = local_pack.case_dir(case_id), local_pack.golden_dir(case_id)
    assert sorted(p.name for p in case_dir.iterdir()) == [
        "case.txt",
        "input0.bin",
        "input1.bin",
        "input2.bin",
    ]
    assert sorted(p.name for p in golden_dir.iterdir()) == ["output0.bin", "output1.bin"]
    assert (case_dir / "input2.bin").stat().st_size == 16 * 64 * 1023 * 2
    descriptor = (case_dir / "case.txt").read_text().splitlines()
    assert "input0 3 1 1 1023" in descriptor
    assert "axes 2 0 2" in descriptor
    assert "output1 3 1 64 1" in descriptor
    inputs = local_pack.load_inputs(case_id)
    assert all(np.array_equal(a, b) for a, b in zip(inputs, generate_inputs(case), strict=True))
    goldens = local_pack.load_golden(case_id)
    expected = compute_golden(case, generate_inputs(case))
    assert all(np.array_equal(a, b) for a, b in zip(goldens, expected, strict=True))
    manifest = json.loads((local_pack.root / "manifest.json").read_text())
    assert manifest["pack_hash"] == local_pack.pack_hash


def test_raw_files_are_little_endian(local_pack: InputPack) -> None:
    case = local_pack.entry("c15_small_bcast_f32").case
    raw = np.fromfile(local_pack.case_dir(case.id) / "input0.bin", dtype="<f4")
    assert np.array_equal(raw.reshape(case.input0), local_pack.load_inputs(case.id)[0])


def _tree_state(folder: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime) of everything under `folder`: any write or replacement changes it."""
    return {
        str(p.relative_to(folder)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
    }


def test_hash_without_cache_matches_and_is_read_from_the_cache(
    local_pack: InputPack, definition: OperatorDefinition, pack_cache: Path
) -> None:
    cases = local_cases(definition)
    small = cases[-3:]
    assert input_pack_hash(small, None, definition) == input_pack_hash(small, None, definition)
    before = _tree_state(pack_cache)
    assert input_pack_hash(cases, pack_cache, definition) == local_pack.pack_hash
    # read from the cache: a miss would build in a scratch folder and rewrite keys/<key>;
    # how cheap the hit is, is a figure of bench/latency.py
    assert _tree_state(pack_cache) == before
    assert case_set_key(cases, definition) == local_pack.case_set_key


def test_hash_follows_definitions_not_notes(definition: OperatorDefinition) -> None:
    small = local_cases(definition)[-1:]
    base = input_pack_hash(small, None, definition)
    renoted = [small[0].model_copy(update={"note": "changed"})]
    reseeded = [small[0].model_copy(update={"seed": small[0].seed + 1})]
    assert input_pack_hash(renoted, None, definition) == base
    assert input_pack_hash(reseeded, None, definition) != base


def test_cache_and_rebuild_agree(definition: OperatorDefinition, tmp_path: Path) -> None:
    small = local_cases(definition)[-2:]
    cached = ensure_input_pack(small, tmp_path / "cache", definition)
    assert cached.root == tmp_path / "cache" / cached.pack_hash
    again = ensure_input_pack(small, tmp_path / "cache", definition)
    assert again.root == cached.root
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".build-")]
    fresh = build_input_pack(small, tmp_path / "elsewhere", definition)
    assert fresh.pack_hash == cached.pack_hash
    assert load_input_pack(tmp_path / "elsewhere").pack_hash == cached.pack_hash
    with pytest.raises(FileExistsError):
        build_input_pack(small, tmp_path / "elsewhere", definition)


def test_tampering_is_detected(definition: OperatorDefinition, tmp_path: Path) -> None:
    pack = build_input_pack(local_cases(definition)[-1:], tmp_path / "p", definition)
    verify_input_pack(pack, definition)
    target = pack.case_dir(pack.case_ids[0]) / "input1.bin"
    data = bytearray(target.read_bytes())
    data[0] ^= 1
    target.write_bytes(bytes(data))
    os.utime(target)
    with pytest.raises(PackError, match=r"input1\.bin"):
        verify_input_pack(pack, definition)


def test_read_raw_rejects_wrong_size(local_pack: InputPack) -> None:
    path = local_pack.case_dir("c15_small_bcast_f32") / "input0.bin"
    with pytest.raises(ValueError, match="expected"):
        read_raw(path, "float32", (5, 2, 7))
