"""The report fully in Chinese (issue #16, 11): with `lang="zh"` the report's own sentences,
statuses, labels and the teams' reasons (from their codes) are Chinese, not only its
headings; the run's data (names, ids) is kept as it is. Every text of the document is read,
so an English sentence left over fails."""

from __future__ import annotations

import re
from collections.abc import Iterator

from justkernel.core.events.runs import TeamPaused, TeamRegistered
from justkernel.core.reasons import SPECS, Reason, ReasonCode
from justkernel.events import NewEvent
from justkernel.lab import Lab
from justkernel.reports.document import Banner, Code, Document, Figure, Mono, Para, Table
from justkernel.reports.i18n import REASONS_ZH, localise
from justkernel.reports.report import build_document, build_report
from tests.web.synthetic import judger_events, write_run

# English words the report's own text uses; none may be left in the Chinese one
ENGLISH = re.compile(
    r"\b(the|of|by|no|not|yet|with|and|is|Goal|Teams|Data|Target|Run|mode|created|events?|"
    r"estimated|baseline|gain|receipt|Verified|submission|pass|fail|frozen|nominated|"
    r"awaiting|approval|official_pass|official_fail|under_review|rejected|submitted|"
    r"accept|idle|demo|simulated|imported|Pipeline|Trace|cycles|notes)\b"
)


def _texts(doc: Document) -> Iterator[str]:
    """Every text of the document a reader reads, except inline code and code blocks."""
    for section in doc.sections:
        yield section.title
        for block in section.blocks:
            if isinstance(block, str):
                yield block
            elif isinstance(block, Para):
                yield from (p for p in block.parts if not isinstance(p, Mono))
            elif isinstance(block, Banner):
                yield block.text
            elif isinstance(block, Figure):
                yield block.caption
            elif isinstance(block, Table):
                yield from block.header
                for row in block.rows:
                    yield from (str(c) for c in row[1:] if isinstance(c, str))
            elif isinstance(block, Code):
                continue


async def test_the_chinese_report_has_no_english_sentence_left(sqlite_lab: Lab) -> None:
    events = judger_events("cand-aaa", "cand-bbb")
    for event in events:  # the rules' own reasons, as the Judger writes them
        if event.payload.get("reasons"):
            event.payload["reasons"] = ["no receipt for this source"]
    run_id = await write_run(sqlite_lab, "中文运行", events, simulated=True)
    english = list(_texts(await build_document(sqlite_lab, run_id)))
    assert any(ENGLISH.search(text) for text in english)  # the check reads what it should
    zh = localise(await build_document(sqlite_lab, run_id), "zh")
    left = [text for text in _texts(zh) if ENGLISH.search(text)]
    assert left == []
    markdown = await build_report(sqlite_lab, run_id, "md", lang="zh")
    for phrase in ("目标：", "队伍：", "数据来源：", "模拟数据", "官方通过"):
        assert phrase in markdown, phrase
    assert "中文运行" in markdown and "cand-aaa" in markdown  # the run's data as it is


async def test_the_reports_give_a_teams_reason_in_their_language(sqlite_lab: Lab) -> None:
    budget = Reason.of(ReasonCode.TEAM_CAP, team="team-001", cap=5000.0, unit="tokens")
    events = [
        NewEvent.of(TeamRegistered(display_name="Budget-A", model_preset="qwen"), "team-001"),
        NewEvent.of(TeamRegistered(display_name="Watch-B", model_preset="qwen"), "team-002"),
        NewEvent.of(TeamPaused(**budget.fields()), "team-001"),
        # the words alone, as a log from before the codes holds them
        NewEvent.of(TeamPaused(reason="no progress: paused by the stall watchdog"), "team-002"),
    ]
    run_id = await write_run(sqlite_lab, "reasons", events)
    english = await build_report(sqlite_lab, run_id, "md", lang="en")
    assert "budget: team team-001 would exceed its cap of 5000 tokens with this call" in english
    assert "no progress: paused by the stall watchdog" in english
    for fmt in ("md", "html"):
        zh = await build_report(sqlite_lab, run_id, fmt, lang="zh")
        assert "预算：本次调用会使团队 team-001 超出 5000 词元 的上限" in zh, fmt
        assert "没有进展：已被停滞看门狗暂停" in zh, fmt
        assert "would exceed" not in zh and "stall watchdog" not in zh, fmt


def test_every_reason_code_has_chinese_report_words() -> None:
    assert set(REASONS_ZH) == set(ReasonCode)
    for code, spec in SPECS.items():
        for name, _ in spec.params:
            assert f"{{{name}}}" in REASONS_ZH[code], (code, name)
