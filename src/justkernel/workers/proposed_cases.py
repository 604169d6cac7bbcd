"""An evaluator for a team's own probe cases: the same pool, toolchain, blobs and cache, with
the team's proposed cases added to the operator's local ones. Their packs and job keys differ,
so results on proposed cases never mix with results on the standard cases."""

from __future__ import annotations

from justkernel.operators import CaseSpec, local_cases, perf_cases
from justkernel.workers.evaluator import CaseSets, Evaluator


def extend_evaluator(evaluator: Evaluator, extra: tuple[CaseSpec, ...]) -> Evaluator:
    definition = evaluator.definition
    return Evaluator(
        evaluator.settings,
        evaluator.pool,
        evaluator.toolchain,
        evaluator.blobs,
        definition=definition,
        sim_parallelism=evaluator.sim_parallelism,
        cases=CaseSets(local=local_cases(definition) + extra, perf=perf_cases(definition)),
    )
