"""The receipt cache on disk: every team that reaches a source holds the one parsed receipt."""

from __future__ import annotations

import os
from pathlib import Path

from justkernel.core.receipts import (
    CaseOutcome,
    CaseResult,
    Executor,
    JobKind,
    Receipt,
    Status,
)
from justkernel.workers.cache import ReceiptCache

KEY = "ab" * 32


def _receipt(detail: str) -> Receipt:
    case = CaseResult(case_id="c01", outcome=CaseOutcome.PASSED, passed=True, detail=detail)
    return Receipt(
        job_key=KEY,
        operator="confusion_mul_grad",
        kind=JobKind.PROBE,
        status=Status.PROBE_PASSED,
        source_sha256="cd" * 32,
        input_packs={"local": "ef" * 32},
        case_ids=["c01"],
        cases=[case],
        executor=Executor(host="h", toolchain_id="cpu", toolchain_version="1"),
        cacheable=True,
    )


def test_hits_share_one_parse_and_a_rewrite_is_read_afresh(tmp_path: Path) -> None:
    cache = ReceiptCache(tmp_path)
    assert cache.put(_receipt("first"))
    one, two = cache.get(KEY), cache.get(KEY)
    assert one is not None and two is not None and one.cache_hit and two.cache_hit
    assert one.cases[0] is two.cases[0]  # one parsed receipt, not a copy per team
    one.team = "a"  # each caller owns its top level
    assert two.team is None and cache.get(KEY).team is None  # type: ignore[union-attr]
    # a newer receipt for the key (another run) replaces the file: it is what get returns
    stat = (tmp_path / f"{KEY}.json").stat()
    assert cache.put(_receipt("again"))
    os.utime(tmp_path / f"{KEY}.json", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again = cache.get(KEY)
    assert again is not None and again.cases[0].detail == "again"
    (tmp_path / f"{KEY}.json").write_text("not json")
    assert cache.get(KEY) is None
