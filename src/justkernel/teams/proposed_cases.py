"""Probe cases a team proposes: its own hypotheses about shapes worth testing.

They are kept beside (never instead of) the operator's 15 local cases, each with its own input
hash, marked as unconfirmed hypotheses: a proposed case only ever drives a probe; the full
validation, the freeze and the Judger use the operator's cases alone. They live in the lab's
data folder, outside the workspace, so only the tool can change them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from justkernel.operators import CaseSpec, OperatorDefinition, input_pack_hash, local_cases

MAX_PROPOSED = 10
MAX_ELEMENTS = 4 * 1024 * 1024


class ProposalError(ValueError):
    """A proposed case is refused; the message names the case and the problem."""


class ProposedCases:
    def __init__(self, folder: Path, run_id: str, team_id: str, operator: OperatorDefinition):
        self.path = folder / run_id / f"{team_id}.json"
        self.team_id = team_id
        self.operator = operator

    def load(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        return json.loads(self.path.read_text())

    def cases(self) -> tuple[CaseSpec, ...]:
        return tuple(CaseSpec.model_validate(entry["case"]) for entry in self.load())

    def propose(self, raw_cases: list[dict[str, Any]], rationale: str) -> list[dict[str, Any]]:
        """Validate and add cases (all or nothing); returns the stored entries."""
        existing = self.load()
        taken = {c.id for c in local_cases(self.operator)} | {e["case"]["id"] for e in existing}
        if len(existing) + len(raw_cases) > MAX_PROPOSED:
            raise ProposalError(f"at most {MAX_PROPOSED} proposed cases per team")
        added = []
        for n, raw in enumerate(raw_cases):
            body = dict(raw)
            body.setdefault("seed", 1000 + len(existing) + n)
            body.setdefault("distribution", "symmetric")
            body["id"] = f"x_{self.team_id.replace('-', '')}_{body.get('id', n)}".lower()
            try:
                case = CaseSpec.model_validate(body)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'case'}: {e['msg']}"
                    for e in exc.errors()
                )
                raise ProposalError(f"case {n}: {problems}") from None
            if case.id in taken:
                raise ProposalError(f"case {n}: id {case.id} is taken")
            if max(math.prod(s) for s in case.shapes) > MAX_ELEMENTS:
                raise ProposalError(f"case {n}: more than {MAX_ELEMENTS:,} elements")
            taken.add(case.id)
            added.append(
                {
                    "case": case.model_dump(mode="json"),
                    "input_hash": input_pack_hash([case], definition=self.operator),
                    "status": "unconfirmed hypothesis",
                    "rationale": rationale,
                }
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(existing + added, indent=1))
        tmp.replace(self.path)
        return added
