"""A real local judge (in a thread, over HTTP) for the collaboration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.evaluation.support import judge_in_thread, judge_token, new_judge_dir
from tests.support.labs import open_folder


@pytest.fixture
def judge_url() -> Iterator[tuple[str, str]]:
    judge_dir = new_judge_dir(open_folder("jk-judger-"))
    with judge_in_thread(judge_dir) as url:
        yield url, judge_token(judge_dir)
