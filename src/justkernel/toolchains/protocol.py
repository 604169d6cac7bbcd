"""What every toolchain backend offers: run one job spec on one candidate, return a receipt.

The job spec itself (`core.jobs.JobSpec`) and the receipt (`core.receipts.Receipt`) are
records of the bottom tier; this module adds what a backend must offer (`Toolchain`), the check
that a spec is meant for it, and its version fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from justkernel.core.jobs import JobSpec, canonical_json
from justkernel.core.receipts import Receipt
from justkernel.operators import InputPack

Progress = Callable[[str], None]  # receives short stage names: "compile", "case c01_row_f32"


def fingerprint(info: Mapping[str, Any]) -> str:
    """A short stable version string for a toolchain's `version_info()`."""
    return hashlib.sha256(canonical_json(dict(info))).hexdigest()[:16]


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
