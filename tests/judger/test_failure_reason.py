"""Why the judge failed a submission, as the Judger records it (issue #16, 4): the result's
code and the compiler's lines from the judge's answer, checked as untrusted input (a code is
a short identifier, lines are cut, an evaluation error is named `judge_error`)."""

from __future__ import annotations

from justkernel.evaluation.official_client import parse_result
from justkernel.judger.feedback import MAX_DIAGNOSTICS, MAX_LINE, failure_of


def _answer(**extra: object) -> dict[str, object]:
    points = [{"id": "h01", "passed": False, "outcome": "compile_failed"}]
    return {"submission_id": "sub-1", "status": "finished", "points": points, **extra}


def test_the_code_and_the_compilers_lines_are_kept() -> None:
    lines = ["kernel: the compiler ran out of time", "cmg_kernel.c:3: error: x"]
    result = parse_result(_answer(outcome="compile_failed", diagnostics=lines))
    assert failure_of(result) == ("compile_failed", lines)


def test_a_hostile_answer_is_cut_to_size_and_its_odd_code_dropped() -> None:
    lines = ["x" * 5000] * 100 + [{"not": "text"}]
    result = parse_result(_answer(outcome="<img src=x onerror=alert(1)>", diagnostics=lines))
    outcome, diagnostics = failure_of(result)
    assert outcome is None
    assert len(diagnostics) == MAX_DIAGNOSTICS and {len(d) for d in diagnostics} == {MAX_LINE}


def test_an_evaluation_error_is_named() -> None:
    result = parse_result({"submission_id": "sub-2", "status": "error", "error": "sandbox down"})
    assert failure_of(result) == ("judge_error", ["sandbox down"])
