"""A real local judge (in a thread, over HTTP) for the evaluation clients' tests: the `judge_url`
fixture of tests/support/judge.py."""

from tests.support.judge import judge_url

__all__ = ["judge_url"]
