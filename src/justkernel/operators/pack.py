"""Input packs: the materialized inputs and goldens of a case set, named by a content hash.

Every receipt cites the pack hash, so "same inputs" is checkable. A pack on disk:

    <root>/manifest.json                 case specs, file digests, pack hash
    <root>/cases/<case_id>/case.txt      descriptor the harness reads
    <root>/cases/<case_id>/input{0,1,2}.bin
    <root>/golden/<case_id>/output{0,1}.bin

Goldens sit outside the case folders so a sandbox can mount a case folder without the answers.
The pack hash is SHA-256 over a canonical JSON description: format and generator version, the
operator, each case's defining fields, and the SHA-256 of every input and golden file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from justkernel.operators.cases import CaseSpec, generate_inputs
from justkernel.operators.definition import OperatorDefinition, load_operator
from justkernel.operators.golden import compute_golden
from justkernel.operators.rawfiles import case_descriptor, raw_bytes, read_raw

PACK_FORMAT = "justkernel.input_pack/1"
# Bump when input generation or the golden reference changes: it is part of every hash.
GENERATOR_VERSION = "cmg-generator/1"
MANIFEST = "manifest.json"


class PackError(RuntimeError):
    """A pack on disk is missing, malformed, or its files no longer match their digests."""


@dataclass(frozen=True)
class PackEntry:
    """Where one case's files are, and their digests."""

    case: CaseSpec
    case_dir: Path
    golden_dir: Path
    input_sha256: tuple[str, ...]
    golden_sha256: tuple[str, ...]


@dataclass(frozen=True)
class InputPack:
    root: Path
    operator: str
    pack_hash: str
    case_set_key: str
    entries: tuple[PackEntry, ...]

    @property
    def cases(self) -> tuple[CaseSpec, ...]:
        return tuple(e.case for e in self.entries)

    @property
    def case_ids(self) -> tuple[str, ...]:
        return tuple(e.case.id for e in self.entries)

    def entry(self, case_id: str) -> PackEntry:
        for e in self.entries:
            if e.case.id == case_id:
                return e
        raise KeyError(f"case {case_id!r} not in pack {self.pack_hash[:12]}")

    def case_dir(self, case_id: str) -> Path:
        """The folder to hand to the harness: case.txt and the input .bin files."""
        return self.entry(case_id).case_dir

    def golden_dir(self, case_id: str) -> Path:
        return self.entry(case_id).golden_dir

    def load_inputs(self, case_id: str) -> tuple[np.ndarray, ...]:
        e = self.entry(case_id)
        names = _input_names()
        return tuple(
            read_raw(e.case_dir / n, e.case.dtype, s)
            for n, s in zip(names, e.case.shapes, strict=True)
        )

    def load_golden(self, case_id: str) -> tuple[np.ndarray, ...]:
        e = self.entry(case_id)
        names = _output_names()
        return tuple(
            read_raw(e.golden_dir / n, e.case.dtype, s)
            for n, s in zip(names, e.case.output_shapes, strict=True)
        )


def _input_names(definition: OperatorDefinition | None = None) -> tuple[str, ...]:
    return (definition or load_operator()).harness.input_files


def _output_names(definition: OperatorDefinition | None = None) -> tuple[str, ...]:
    return (definition or load_operator()).harness.output_files


def _canonical_json(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def case_set_key(cases: Sequence[CaseSpec], definition: OperatorDefinition | None = None) -> str:
    """Hash of the case definitions alone: finds a cached pack without generating anything."""
    definition = definition or load_operator()
    head = {
        "format": PACK_FORMAT,
        "generator": GENERATOR_VERSION,
        "operator": definition.name,
        "cases": [c.canonical() for c in cases],
    }
    return _sha256(_canonical_json(head))


def _pack_hash(
    operator: str,
    cases: Sequence[CaseSpec],
    inputs: Sequence[Sequence[str]],
    goldens: Sequence[Sequence[str]],
) -> str:
    description = {
        "format": PACK_FORMAT,
        "generator": GENERATOR_VERSION,
        "operator": operator,
        "cases": [
            {**c.canonical(), "input_sha256": list(i), "golden_sha256": list(g)}
            for c, i, g in zip(cases, inputs, goldens, strict=True)
        ],
    }
    return _sha256(_canonical_json(description))


def _materialize(cases: Sequence[CaseSpec]) -> Iterator[tuple[CaseSpec, list[bytes], list[bytes]]]:
    """Inputs and goldens of each case as raw file bytes, one case at a time to bound memory."""
    for case in cases:
        inputs = generate_inputs(case)
        goldens = compute_golden(case, inputs)
        yield case, [raw_bytes(a) for a in inputs], [raw_bytes(a) for a in goldens]


def _check_unique(cases: Sequence[CaseSpec]) -> None:
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"case ids repeat: {duplicates}")


def build_input_pack(
    cases: Iterable[CaseSpec], dest: Path, definition: OperatorDefinition | None = None
) -> InputPack:
    """Generate inputs and goldens for `cases` into `dest` (must not exist or be empty)."""
    definition = definition or load_operator()
    cases = tuple(cases)
    _check_unique(cases)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    in_names, out_names = _input_names(definition), _output_names(definition)
    records = []
    all_inputs, all_goldens = [], []
    for case, inputs, goldens in _materialize(cases):
        case_dir = dest / "cases" / case.id
        golden_dir = dest / "golden" / case.id
        case_dir.mkdir(parents=True)
        golden_dir.mkdir(parents=True)
        (case_dir / definition.harness.descriptor_file).write_text(case_descriptor(case))
        for name, data in zip(in_names, inputs, strict=True):
            (case_dir / name).write_bytes(data)
        for name, data in zip(out_names, goldens, strict=True):
            (golden_dir / name).write_bytes(data)
        in_sha = [_sha256(d) for d in inputs]
        out_sha = [_sha256(d) for d in goldens]
        all_inputs.append(in_sha)
        all_goldens.append(out_sha)
        records.append(
            {
                "spec": case.model_dump(mode="json"),
                "case_dir": f"cases/{case.id}",
                "golden_dir": f"golden/{case.id}",
                "inputs": [
                    {"file": n, "shape": list(s), "sha256": h}
                    for n, s, h in zip(in_names, case.shapes, in_sha, strict=True)
                ],
                "goldens": [
                    {"file": n, "shape": list(s), "sha256": h}
                    for n, s, h in zip(out_names, case.output_shapes, out_sha, strict=True)
                ],
            }
        )
    manifest = {
        "format": PACK_FORMAT,
        "generator": GENERATOR_VERSION,
        "operator": definition.name,
        "pack_hash": _pack_hash(definition.name, cases, all_inputs, all_goldens),
        "case_set_key": case_set_key(cases, definition),
        "cases": records,
    }
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return load_input_pack(dest)


def load_input_pack(root: Path) -> InputPack:
    """Read a pack's manifest (cheap: no file is re-hashed; see verify_input_pack)."""
    root = Path(root)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
        if manifest["format"] != PACK_FORMAT:
            raise PackError(f"{root / MANIFEST}: format {manifest['format']!r} not {PACK_FORMAT!r}")
        entries = tuple(
            PackEntry(
                case=CaseSpec.model_validate(r["spec"]),
                case_dir=root / r["case_dir"],
                golden_dir=root / r["golden_dir"],
                input_sha256=tuple(f["sha256"] for f in r["inputs"]),
                golden_sha256=tuple(f["sha256"] for f in r["goldens"]),
            )
            for r in manifest["cases"]
        )
        return InputPack(
            root=root,
            operator=manifest["operator"],
            pack_hash=manifest["pack_hash"],
            case_set_key=manifest["case_set_key"],
            entries=entries,
        )
    except FileNotFoundError:
        raise PackError(f"{root}: no {MANIFEST}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise PackError(f"{root / MANIFEST}: malformed manifest: {exc}") from None


def verify_input_pack(pack: InputPack, definition: OperatorDefinition | None = None) -> None:
    """Re-hash every file and the description; raise PackError on any mismatch."""
    in_names, out_names = _input_names(definition), _output_names(definition)
    for e in pack.entries:
        files = [(e.case_dir / n, h) for n, h in zip(in_names, e.input_sha256, strict=True)]
        files += [(e.golden_dir / n, h) for n, h in zip(out_names, e.golden_sha256, strict=True)]
        for path, digest in files:
            if not path.is_file() or _sha256(path.read_bytes()) != digest:
                raise PackError(f"{path}: missing or changed since the pack was built")
    recomputed = _pack_hash(
        pack.operator,
        pack.cases,
        [e.input_sha256 for e in pack.entries],
        [e.golden_sha256 for e in pack.entries],
    )
    if recomputed != pack.pack_hash:
        raise PackError(f"{pack.root}: manifest pack_hash does not match its contents")


def _cached(cache_dir: Path, key: str) -> InputPack | None:
    index = cache_dir / "keys" / key
    if not index.is_file():
        return None
    root = cache_dir / index.read_text().strip()
    if not (root / MANIFEST).is_file():
        return None
    return load_input_pack(root)


def find_input_pack(
    cases: Iterable[CaseSpec], cache_dir: Path, definition: OperatorDefinition | None = None
) -> InputPack | None:
    """The pack of `cases` already built under `cache_dir`, or None (nothing is generated)."""
    definition = definition or load_operator()
    return _cached(Path(cache_dir), case_set_key(tuple(cases), definition))


def ensure_input_pack(
    cases: Iterable[CaseSpec], cache_dir: Path, definition: OperatorDefinition | None = None
) -> InputPack:
    """The pack for `cases` under `cache_dir/<pack_hash>/`, built once, safe under concurrency.

    Builders race benignly: each builds in a private temp folder and renames it into place; the
    loser discards its copy (same hash, same bytes).
    """
    definition = definition or load_operator()
    cases = tuple(cases)
    cache_dir = Path(cache_dir)
    key = case_set_key(cases, definition)
    found = _cached(cache_dir, key)
    if found is not None:
        return found
    cache_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=cache_dir))
    try:
        built = build_input_pack(cases, scratch / "pack", definition)
        final = cache_dir / built.pack_hash
        if not (final / MANIFEST).is_file():
            try:
                os.rename(scratch / "pack", final)
            except OSError:
                if not (final / MANIFEST).is_file():
                    raise
        (cache_dir / "keys").mkdir(exist_ok=True)
        index_tmp = scratch / "key"
        index_tmp.write_text(built.pack_hash + "\n")
        os.replace(index_tmp, cache_dir / "keys" / key)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return load_input_pack(final)


def input_pack_hash(
    cases: Iterable[CaseSpec],
    cache_dir: Path | None = None,
    definition: OperatorDefinition | None = None,
) -> str:
    """The pack hash of `cases`: read from the cache when present (no generation).

    With a cache folder a miss builds and caches the pack; without one the inputs and goldens
    are generated in memory and hashed, nothing is written.
    """
    definition = definition or load_operator()
    cases = tuple(cases)
    if cache_dir is not None:
        return ensure_input_pack(cases, cache_dir, definition).pack_hash
    _check_unique(cases)
    inputs, goldens = [], []
    for _case, ins, outs in _materialize(cases):
        inputs.append([_sha256(d) for d in ins])
        goldens.append([_sha256(d) for d in outs])
    return _pack_hash(definition.name, cases, inputs, goldens)
