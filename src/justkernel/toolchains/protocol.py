"""What every toolchain backend offers: run one job spec on one candidate, return a receipt.

A `JobSpec` is plain JSON so a remote worker can run it later: it names the source tree and the
input packs by hash, so the worker can check it has exactly what the spec means before it
starts. The CPU backend (`cpu.CpuToolchain`) implements `Toolchain`; a CANN backend comes later.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from justkernel.operators import InputPack
from justkernel.workers.receipts import JobKind, Receipt

Progress = Callable[[str], None]  # receives short stage names: "compile", "case c01_row_f32"

LOCAL_PACK = "local"  # role of the functional cases' pack in JobSpec.input_packs
PERF_PACK = "perf"  # role of the perf cases' pack (full jobs only)


class JobSpec(BaseModel):
    """One evaluation: which source, which inputs, which cases, which toolchain."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    operator: str
    kind: JobKind
    case_ids: tuple[str, ...] = Field(min_length=1)
    perf_case_ids: tuple[str, ...] = ()
    source_tree_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    input_packs: dict[str, str]  # role -> pack hash
    toolchain_id: str
    toolchain_version: str

    @model_validator(mode="after")
    def _consistent(self) -> JobSpec:
        if self.kind is JobKind.FULL and not self.perf_case_ids:
            raise ValueError("a full job names its perf cases")
        if self.kind is JobKind.PROBE and self.perf_case_ids:
            raise ValueError("a probe runs no perf cases")
        if LOCAL_PACK not in self.input_packs:
            raise ValueError("input_packs needs the 'local' pack")
        if self.perf_case_ids and PERF_PACK not in self.input_packs:
            raise ValueError("input_packs needs the 'perf' pack for perf cases")
        if len(set(self.case_ids)) != len(self.case_ids):
            raise ValueError("case ids repeat")
        return self

    def job_key(self) -> str:
        """SHA-256 of everything that decides the outcome; identical keys, identical jobs."""
        return hashlib.sha256(_canonical(self.key_fields())).hexdigest()

    def key_fields(self) -> dict[str, Any]:
        return {
            "toolchain": [self.toolchain_id, self.toolchain_version],
            "operator": self.operator,
            "source_tree": self.source_tree_hash,
            "input_packs": dict(sorted(self.input_packs.items())),
            "kind": self.kind.value,
            "cases": list(self.case_ids),
            "perf_cases": list(self.perf_case_ids),
        }


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def fingerprint(info: Mapping[str, Any]) -> str:
    """A short stable version string for a toolchain's `version_info()`."""
    return hashlib.sha256(_canonical(dict(info))).hexdigest()[:16]


class ToolchainError(RuntimeError):
    """The toolchain could not judge the candidate (infrastructure, not the candidate's fault).

    Never turned into a receipt and never cached.
    """


def check_spec(
    spec: JobSpec, packs: Mapping[str, InputPack], toolchain: tuple[str, str], operator: str
) -> None:
    """Refuse a job meant for another toolchain version or operator, or missing an input
    pack it names: a receipt must only ever describe the job that was asked for."""
    toolchain_id, version = toolchain
    if (spec.toolchain_id, spec.toolchain_version) != (toolchain_id, version):
        raise ToolchainError(
            f"spec is for {spec.toolchain_id} {spec.toolchain_version}, "
            f"this is {toolchain_id} {version}"
        )
    if spec.operator != operator:
        raise ToolchainError(f"spec is for operator {spec.operator}")
    for role, digest in spec.input_packs.items():
        if role not in packs or packs[role].pack_hash != digest:
            raise ToolchainError(f"input pack {role!r} {digest[:12]} not provided")


@runtime_checkable
class Toolchain(Protocol):
    """Build, check and measure one candidate. Implementations must be safe to run concurrently
    (one call per pool slot) and must leave the candidate's folder untouched."""

    id: str

    @property
    def version(self) -> str:
        """Fingerprint of everything that can change a result (compiler, flags, limits...)."""
        ...

    def version_info(self) -> dict[str, Any]:
        """The human-readable facts behind `version`."""
        ...

    async def run(
        self,
        spec: JobSpec,
        source_dir: Path,
        packs: Mapping[str, InputPack],
        workdir: Path,
        slot: int,
        *,
        parallelism: int = 1,
        progress: Progress | None = None,
    ) -> Receipt:
        """Run `spec` on the tree in `source_dir` (already a private snapshot) using the packs
        by role; scratch files go to `workdir`, logs to `workdir/logs/<sha256>`.

        Raise ToolchainError (or a SandboxError) when the infrastructure fails.
        """
        ...
