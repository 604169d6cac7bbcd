"""A job spec: one evaluation named by hashes, so any worker can run it later and check it
has exactly what the spec means before it starts.

It lives at the bottom tier because every side of an evaluation reads it: the toolchains run
it, the workers queue and ship it, the receipt cache keys on `job_key`. Plain JSON, no I/O.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from justkernel.core.receipts import JobKind

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
        return hashlib.sha256(canonical_json(self.key_fields())).hexdigest()

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


def canonical_json(obj: Any) -> bytes:
    """The one byte form hashed for job keys and toolchain fingerprints (sorted keys, ASCII)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
