"""The run brief in the system prompt: with a Judger, how many official submissions a day it
may spend (the contest's limit unless the scheduler knows the Judger's own quota), so a model
knows a frozen candidate is not submitted at once, nor every one."""

from __future__ import annotations

from justkernel.agents.prompts import CONTEST_DAILY_SUBMISSIONS, RunBrief, system_prompt
from justkernel.judger.settings import MAX_DAILY_QUOTA


def _prompt(brief: RunBrief) -> str:
    return system_prompt("Team A", "ConfusionMulGrad", "the rest is fixed", brief)


def test_the_daily_submission_limit_is_said_when_a_judger_submits() -> None:
    assert CONTEST_DAILY_SUBMISSIONS == MAX_DAILY_QUOTA  # the Judger's quota is at most this
    said = _prompt(RunBrief(judger=True))
    assert f"at most {CONTEST_DAILY_SUBMISSIONS} candidates a day" in said
    assert "00:00 Asia/Shanghai" in said
    assert "at most 3 candidates a day" in _prompt(RunBrief(judger=True, submissions_per_day=3))
    alone = _prompt(RunBrief(judger=False))
    assert "candidates a day" not in alone and "has no Judger" in alone
