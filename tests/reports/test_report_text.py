"""The run report as a reader sees it: untrusted strings (run and team names, ids, reasons) come
out as their literal text in a real Markdown renderer, never as HTML or Markdown markup; numbers
are formatted; labels are never left empty; inline code is <code> in the HTML page."""

from __future__ import annotations

import re
from html import unescape

from markdown_it import MarkdownIt

from justkernel.events import NewEvent
from justkernel.lab import Lab
from justkernel.reports.document import md_escape
from justkernel.reports.report import build_report, fmt_num
from tests.web.synthetic import judger_events, write_run

NAME = "<img src=x onerror=alert(1)> *run* [x](javascript:alert(2)) `tick` | pipe"
TEAM = "# <b>Team</b> _one_ ![i](http://x/i.png) <script>alert(3)</script>"


def _rendered(markdown: str) -> str:
    """The HTML a CommonMark viewer with raw HTML and tables on (as GitHub's) makes of it."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def _events(prof_sum: float) -> list[NewEvent]:
    events = judger_events("cand-aaa", "cand-bbb")
    for event in events:
        if event.kind == "team.registered" and event.team == "team-001":
            event.payload["display_name"] = TEAM
        if event.kind == "official.result":
            event.payload["prof_sum_us"] = prof_sum
            event.payload["team"] = "team-001"
    return events


async def test_markdown_report_shows_hostile_names_as_literal_text(sqlite_lab: Lab) -> None:
    run_id = await write_run(sqlite_lab, NAME, _events(2557.75))
    html = _rendered(await build_report(sqlite_lab, run_id, "md"))
    for element in ("<img", "<script", "<b>", "<em>", "<a ", "<h1># "):
        assert element not in html, element
    text = unescape(html)
    assert NAME in text and TEAM in text  # the literal names, read back from the rendered page
    assert html.count("<h1>") == 1  # the team name's "#" did not open a heading


def test_md_escape_keeps_block_markup_out_of_text() -> None:
    for hostile in ("- item", "1. item", "> quote", "```code", "~~~", "+ x", "=== x", "a\n# b"):
        html = _rendered(md_escape(hostile))
        assert html.startswith("<p>") and html.count("<p>") == 1, (hostile, html)
        assert unescape(html)[3:-5] == hostile.replace("\n", " ")


async def test_report_text_reads_cleanly(sqlite_lab: Lab) -> None:
    run_id = await write_run(sqlite_lab, "plain run", _events(76772.63799999999))
    markdown = await build_report(sqlite_lab, run_id, "md")
    html = await build_report(sqlite_lab, run_id, "html")
    text = unescape(_rendered(markdown))

    assert "76772.637" not in markdown and "prof_sum 76,772.6 µs" in text
    assert "| 812.5 |" in markdown  # point times keep their figure, without float noise
    # the SOTA names the team as the user sees it, not its internal id
    assert f"of {TEAM}, prof_sum" in text and "of team-001" not in text
    assert f"of {TEAM.replace('<', '&lt;').replace('>', '&gt;')}, prof_sum" in html
    # a review without reasons says what the rules checked, never an empty label
    for shown in (text, html):
        assert not re.search(r"by rules:\s*(<|\||;|$)", shown, re.M)
        assert "accepted by rules (rebuilt" in shown
    assert "`" not in html.split("<body>")[1].replace("<pre><code>", "")  # no Markdown leaks
    assert "Target: <code>cpu</code>" in html and "Run <code>" in html


def test_numbers_read_as_figures() -> None:
    cases = {
        76772.63799999999: "76,772.6",
        812.5: "812.5",
        1290.0: "1,290",
        0.0001: "0.0001",
        1.23456789e-9: "1.23457e-09",
        520_000_000: "520,000,000",
        0.0: "0",
    }
    assert {value: fmt_num(value) for value in cases} == cases


async def test_report_headings_follow_the_language(sqlite_lab: Lab) -> None:
    run_id = await write_run(sqlite_lab, "中文 run", _events(2557.75))
    markdown = await build_report(sqlite_lab, run_id, "md", lang="zh")
    html = await build_report(sqlite_lab, run_id, "html", lang="zh")
    assert markdown.startswith("# JustKernel 运行报告 — 中文 run\n")
    for heading in ("## 目标", "## 队伍", "## 各测试点的官方结果", "## 评审决定与审批"):
        assert heading in markdown, heading
    assert "| 提交 | 候选 | 队伍 |" in markdown and "## Goal" not in markdown
    assert html.startswith("<!doctype html><html lang='zh-CN'>") and "<h2>目标</h2>" in html
    english = await build_report(sqlite_lab, run_id, "html")
    assert "<html lang='en'>" in english and "<h2>Goal</h2>" in english
