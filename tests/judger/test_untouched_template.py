"""The Judger never spends a daily submission on the untouched template: a team that measures
the baseline first freezes exactly the project's own files, and the review rejects them, saying
why (the reason is the `judger.review` event's). A change of one byte is a candidate again."""

from __future__ import annotations

import pytest

from justkernel.judger.review import review_candidate
from justkernel.operators import OperatorDefinition, load_operator


def _baseline(operator: OperatorDefinition) -> dict[str, bytes]:
    """The template's editable files, as a freeze of an unchanged workspace holds them."""
    root = operator.project_dir
    files = {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}
    return {r: p.read_bytes() for r, p in files.items() if operator.paths.access(r) == "editable"}


def _untouched(reasons: tuple[str, ...]) -> bool:
    return any("untouched template" in r for r in reasons)


def _target(name: str) -> OperatorDefinition:
    base = load_operator()
    return base if name == "cpu" else base.ascendc_target()


@pytest.mark.parametrize("target", ["cpu", "ascendc"])
def test_the_untouched_template_is_rejected_and_a_changed_one_is_not(target: str) -> None:
    operator = _target(target)
    baseline = _baseline(operator)
    assert any(rel.startswith("op_kernel/") for rel in baseline)
    review = review_candidate(baseline, "0" * 64, None, operator)
    assert review.verdict == "rejected" and _untouched(review.reasons)
    kernel = next(rel for rel in sorted(baseline) if rel.startswith("op_kernel/"))
    changed = {**baseline, kernel: baseline[kernel] + b"\n// tuned\n"}
    assert not _untouched(review_candidate(changed, "0" * 64, None, operator).reasons)
