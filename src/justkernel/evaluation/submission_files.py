"""A submission on the wire (the judge's "submission bundle"): the editable files as base64 or as a
ZIP, and the target they are written for, checked before anything runs.

A bundle names its `toolchain` (`core.targets`; "ascendc-cpu" when absent): the Ascend C project
("ascendc-cpu", "cann") or the C port ("cpu"). The judge accepts exactly the files a team may
change in that target's project (`OperatorDefinition.for_toolchain(...).paths`), each at most
1 MiB, at most 64 of them. Everything else is refused with a message that says why: a toolchain
the judge does not evaluate, a file of the other target's project (C port sources named
"ascendc-cpu", or the reverse: they would be ignored and the template judged instead), absolute
paths, `..`, backslashes, a `.git` (or another name git reads as its own) at any depth, links
inside a ZIP, harness, header or build files, oversized or too many members, an archive that
inflates beyond the limit. Nothing is written to disk here.
"""

from __future__ import annotations

import base64
import binascii
import re
import stat
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from justkernel.core.relpath import relpath_problem
from justkernel.core.targets import DEFAULT_TOOLCHAIN, TOOLCHAIN_IDS, playbook_target
from justkernel.core.tree_hash import editable_tree_sha256
from justkernel.evaluation.protocol import CandidateBundle
from justkernel.operators import OperatorDefinition, OperatorDefinitionError
from justkernel.operators.project_files import other_target_owning

_SAFE_PATH = re.compile(r"^[A-Za-z0-9_.\-/]{1,200}$")
_META_KEYS = ("team", "candidate_id", "note")
MAX_META_CHARS = 500


class BundleError(ValueError):
    """The submission is refused; the message is safe to send back to the client."""


@dataclass(frozen=True)
class BundleLimits:
    max_file_bytes: int = 1 << 20
    max_total_bytes: int = 4 << 20
    max_files: int = 64

    @property
    def max_body_bytes(self) -> int:
        """A JSON body carrying the largest allowed bundle in base64, with room to spare."""
        return self.max_total_bytes * 2 + (64 << 10)


@dataclass(frozen=True)
class DecodedBundle:
    files: dict[str, bytes]
    source_sha256: str
    client: dict[str, str | None]
    toolchain: str = DEFAULT_TOOLCHAIN


# Why a judge may refuse a known toolchain, said to the client (see `decode_bundle(toolchains=)`).
_REFUSAL_HINTS = {
    "cann": "it builds with the Ascend toolkit on an NPU host; send the same Ascend C sources "
    "with toolchain 'ascendc-cpu' to have them evaluated on this CPU",
    "cpu": "it evaluates Ascend C sources only (toolchain 'ascendc-cpu' or 'cann')",
}


def encode_bundle(bundle: CandidateBundle, *, upload: str = "zip") -> dict[str, Any]:
    """The JSON body of `POST /api/submissions` for `bundle` (`upload`: zip or files)."""
    body: dict[str, Any] = {
        "operator": bundle.operator,
        "toolchain": bundle.toolchain,
        "source_sha256": bundle.source_sha256,
        "client": bundle.client_metadata(),
    }
    if upload == "zip":
        body["archive"] = base64.b64encode(bundle.to_zip()).decode()
    elif upload == "files":
        body["files"] = {k: base64.b64encode(v).decode() for k, v in bundle.files.items()}
    else:
        raise ValueError(f"unknown upload format {upload!r} (zip or files)")
    return body


def check_path(rel: Any, definition: OperatorDefinition) -> str:
    """`rel` as a clean relative POSIX path inside the editable area, or BundleError."""
    if not isinstance(rel, str) or not rel:
        raise BundleError("file names must be non-empty strings")
    shown = rel[:80].encode("unicode_escape").decode()
    if "\\" in rel or "\0" in rel or not _SAFE_PATH.match(rel):
        raise BundleError(f"{shown}: file names use letters, digits, '_', '-', '.' and '/' only")
    if (problem := relpath_problem(rel)) is not None:
        raise BundleError(f"{shown}: {problem}")
    access = definition.paths.access(rel)
    if access == "forbidden":
        raise BundleError(f"{shown}: fixed by the operator; it cannot be uploaded")
    if access != "editable":
        allowed = ", ".join(definition.paths.editable)
        raise BundleError(f"{shown}: not an editable file (only {allowed})")
    return rel


def target_view(definition: OperatorDefinition, toolchain: str) -> OperatorDefinition:
    """The operator as `toolchain` builds it, or BundleError when it has no such project."""
    try:
        return definition.for_toolchain(toolchain)
    except (OperatorDefinitionError, ValueError) as exc:
        raise BundleError(f"toolchain {toolchain!r}: {exc}") from None


def check_target(
    files: Mapping[str, bytes], definition: OperatorDefinition, toolchain: str
) -> None:
    """Refuse files of the other target's project (`operators.project_files`): C port sources
    sent as Ascend C (or the reverse) would pass the path check and be ignored by the build."""
    target_view(definition, toolchain)  # a target this operator has, or BundleError
    for rel in sorted(files):
        other_id = other_target_owning(rel, definition, toolchain)
        if other_id is not None:
            raise BundleError(
                f"{rel}: a file of the {playbook_target(other_id)} project (toolchain "
                f"{other_id!r}), but this submission names toolchain {toolchain!r}; send "
                f"the sources of that project or name the toolchain they are written for"
            )


def bundle_toolchain(raw: Any, accepted: Sequence[str] = TOOLCHAIN_IDS) -> str:
    """The submission's target: a known toolchain id this judge evaluates (default
    DEFAULT_TOOLCHAIN when the body names none), or BundleError."""
    if raw is None:
        raw = DEFAULT_TOOLCHAIN
    if not isinstance(raw, str) or raw not in TOOLCHAIN_IDS:
        shown = str(raw)[:40].encode("unicode_escape").decode()
        raise BundleError(f"toolchain {shown!r}: expected one of {', '.join(TOOLCHAIN_IDS)}")
    if raw not in accepted:
        hint = _REFUSAL_HINTS.get(raw, "")
        raise BundleError(
            f"toolchain {raw!r}: this judge evaluates {', '.join(accepted)} only"
            + (f"; {hint}" if hint else "")
        )
    return raw


def _b64(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise BundleError(f"{what}: expected a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BundleError(f"{what}: not valid base64") from None


def _from_zip(
    data: bytes, definition: OperatorDefinition, limits: BundleLimits
) -> dict[str, bytes]:
    try:
        zf = zipfile.ZipFile(BytesIO(data))
    except (zipfile.BadZipFile, ValueError):
        raise BundleError("archive: not a ZIP file") from None
    with zf:
        members = [i for i in zf.infolist() if not i.is_dir()]
        if len(members) > limits.max_files:
            raise BundleError(f"archive: {len(members)} files, more than {limits.max_files}")
        files: dict[str, bytes] = {}
        total = 0
        for info in members:
            rel = check_path(info.filename, definition)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise BundleError(f"{rel}: links are not allowed")
            if info.flag_bits & 0x1:
                raise BundleError(f"{rel}: encrypted members are not allowed")
            if info.file_size > limits.max_file_bytes:
                raise BundleError(f"{rel}: {info.file_size} bytes, over {limits.max_file_bytes}")
            with zf.open(info) as member:  # read bounded: never trust the declared size
                content = member.read(limits.max_file_bytes + 1)
            if len(content) > limits.max_file_bytes:
                raise BundleError(f"{rel}: larger than {limits.max_file_bytes} bytes")
            total += len(content)
            if total > limits.max_total_bytes:
                raise BundleError(f"archive: more than {limits.max_total_bytes} bytes unpacked")
            if rel in files:
                raise BundleError(f"{rel}: appears twice")
            files[rel] = content
        return files


def _from_files(raw: Any, definition: OperatorDefinition, limits: BundleLimits) -> dict[str, bytes]:
    if not isinstance(raw, Mapping):
        raise BundleError("files: expected an object {path: base64}")
    if len(raw) > limits.max_files:
        raise BundleError(f"files: {len(raw)} files, more than {limits.max_files}")
    files: dict[str, bytes] = {}
    for name, text in raw.items():
        rel = check_path(name, definition)
        content = _b64(text, rel)
        if len(content) > limits.max_file_bytes:
            raise BundleError(f"{rel}: {len(content)} bytes, over {limits.max_file_bytes}")
        if rel in files:
            raise BundleError(f"{rel}: appears twice")
        files[rel] = content
    if sum(len(v) for v in files.values()) > limits.max_total_bytes:
        raise BundleError(f"files: more than {limits.max_total_bytes} bytes in all")
    return files


def _client(raw: Any) -> dict[str, str | None]:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise BundleError("client: expected an object")
    out: dict[str, str | None] = {}
    for key in _META_KEYS:
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise BundleError(f"client.{key}: expected a string")
        out[key] = None if value is None else value[:MAX_META_CHARS]
    return out


def decode_bundle(
    body: Any,
    definition: OperatorDefinition,
    limits: BundleLimits | None = None,
    *,
    toolchains: Sequence[str] = TOOLCHAIN_IDS,
) -> DecodedBundle:
    """Check a submission body and return its files; BundleError says what is wrong.
    `definition` is the operator's own; the files are checked against the view of the
    toolchain the body names, which must be one of `toolchains`."""
    limits = limits or BundleLimits()
    if not isinstance(body, Mapping):
        raise BundleError("expected a JSON object")
    if body.get("operator") != definition.name:
        raise BundleError(f"operator: this judge evaluates {definition.name!r}")
    toolchain = bundle_toolchain(body.get("toolchain"), toolchains)
    operator, definition = definition, target_view(definition, toolchain)
    has_zip, has_files = "archive" in body, "files" in body
    if has_zip == has_files:
        raise BundleError("give exactly one of 'archive' (base64 ZIP) or 'files'")
    if has_zip:
        archive = _b64(body["archive"], "archive")
        if len(archive) > limits.max_total_bytes:
            raise BundleError(f"archive: {len(archive)} bytes, over {limits.max_total_bytes}")
        files = _from_zip(archive, definition, limits)
    else:
        files = _from_files(body["files"], definition, limits)
    if not files:
        raise BundleError("the bundle holds no files")
    check_target(files, operator, toolchain)
    digest = editable_tree_sha256(files)
    claimed = body.get("source_sha256")
    if claimed is not None and claimed != digest:
        raise BundleError("source_sha256 does not match the files received")
    client = _client(body.get("client"))
    return DecodedBundle(files=files, source_sha256=digest, client=client, toolchain=toolchain)
