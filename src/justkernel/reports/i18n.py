"""The report's headings in Chinese (`?lang=zh`, `justkernel report --lang zh`): the title,
the section titles and the table headers, so that a reader finds their way in the language
the dashboard shows. Body sentences, reasons and the run's own data stay as they are."""

from __future__ import annotations

from typing import Literal

from justkernel.reports.document import Document, Table

Lang = Literal["en", "zh"]

ZH: dict[str, str] = {
    "JustKernel run report": "JustKernel 运行报告",
    "Goal": "目标",
    "Teams": "队伍",
    "Best candidates (local receipts)": "最佳候选（本地回执）",
    "Best cycles over time": "最佳周期数随时间变化",
    "Official results per point": "各测试点的官方结果",
    "Judger decisions and approvals": "评审决定与审批",
    # table headers
    "team": "队伍",
    "model": "模型",
    "provider": "提供方",
    "status": "状态",
    "baseline cycles": "基线周期数",
    "best cycles": "最佳周期数",
    "gain": "提升",
    "best receipt": "最佳回执",
    "experiments": "实验数",
    "model calls": "模型调用",
    "tokens": "令牌数",
    "field": "字段",
    "value": "值",
    "submission": "提交",
    "candidate": "候选",
    "source SHA-256": "源码 SHA-256",
    "point": "测试点",
    "result": "结果",
    "error ratio": "误差比",
    "time (µs)": "耗时（µs）",
    "best time (µs)": "最佳耗时（µs）",
    "event": "事件",
    "cycles": "周期数",
    "review": "评审",
    "nomination": "提名",
    "approval": "审批",
    "submissions": "提交",
    "pipe": "流水线",
    "busy cycles": "忙碌周期数",
    "utilisation": "利用率",
    "instructions": "指令数",
}


def lang_of(value: str | None) -> Lang:
    """The report language a query or option names: Chinese for `zh` (or `zh-CN`), else English."""
    return "zh" if (value or "").lower().split("-")[0] == "zh" else "en"


def localise(doc: Document, lang: Lang) -> Document:
    """`doc` with its headings in `lang` (a heading without a translation stays English)."""
    if lang != "zh":
        return doc
    doc.lang = "zh"
    head, sep, rest = doc.title.partition(" — ")
    doc.title = ZH.get(head, head) + sep + rest
    for section in doc.sections:
        section.title = ZH.get(section.title, section.title)
        for block in section.blocks:
            if isinstance(block, Table):
                block.header = [ZH.get(h, h) for h in block.header]
    return doc
