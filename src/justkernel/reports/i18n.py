"""The report in Chinese (`?lang=zh`, `justkernel report --lang zh`): the title, section
titles, table headers, statuses and the report's own sentences, so that a reader reads it in
the language the dashboard shows. The run's own data (names, ids, reasons a model wrote,
source code) stays as it is.

The builders write English; `localise` rewrites a finished document, sentence by sentence,
through exact phrases (`ZH`, `WORDS`) and sentence templates (`SENTENCES`), whose groups carry
the data across untouched. A sentence no template knows stays English (a test lists the
report's sentences and fails on one left over)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from justkernel.core.reasons import SPECS, Reason, ReasonCode
from justkernel.reports.document import Banner, Code, Document, Figure, Mono, Para, Table

Lang = Literal["en", "zh"]

ZH: dict[str, str] = {
    "JustKernel run report": "JustKernel 运行报告",
    "Goal": "目标",
    "Teams": "队伍",
    "Best candidates (local receipts)": "最佳候选（本地回执）",
    "Best cycles over time": "最佳周期数随时间变化",
    "Official results per point": "各测试点的官方结果",
    "Judger decisions and approvals": "评审决定与审批",
    "Approvals": "工具调用审批",
    "tool call": "工具调用",
    "decision": "决定",
    "by": "决定人",
    "reason": "理由",
    "request or grant": "请求或授权",
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
    "why": "原因",
}

# the lab's reasons (core/reasons.py) in Chinese, by code: the same words as the dashboard's
# (resources/web/js/i18n/steps.js, `reason_*`); a test checks every code has them
REASONS_ZH: dict[ReasonCode, str] = {
    ReasonCode.NO_WORK: "没有团队还有工作",
    ReasonCode.STOPPED: "已停止",
    ReasonCode.TIME_LIMIT: "已到时间上限",
    ReasonCode.FAILED: "失败",
    ReasonCode.NOTHING_LEFT: "团队已没有可尝试的方案",
    ReasonCode.REMOVED: "已从仪表盘移除",
    ReasonCode.PAUSED: "已暂停",
    ReasonCode.WATCHDOG: "没有进展：已被停滞看门狗暂停",
    ReasonCode.WATCHDOG_NUDGE: "看门狗：一段时间没有进展（没有源码改动，也没有新实验）。"
    "请记录实验计划并修改内核，或进行仿真，而不是继续阅读。",
    ReasonCode.TURN_TIMEOUT: "回合在 {seconds} 秒后超时",
    ReasonCode.TURN_FAILED: "回合失败（{kind}）：{message}；{seconds} 秒后重试",
    ReasonCode.PROVIDER_PAUSED: "服务商连接 {connection} 已暂停：{message}",
    ReasonCode.RUN_CAP: "预算：本次调用会使运行超出 {cap} {unit} 的上限",
    ReasonCode.TEAM_CAP: "预算：本次调用会使团队 {team} 超出 {cap} {unit} 的上限",
    ReasonCode.AGENT_UNBUILT: "无法构建团队的智能体：{error}",
    ReasonCode.NEW_MESSAGES: "有新消息",
    ReasonCode.RECOVERED: "已恢复",
    ReasonCode.INTERRUPTED: "已中断",
    ReasonCode.AWAITING_APPROVAL: "等待人工批准 {tools}（{ids}）",
}
# a reason's `word` values (units, error kinds) in Chinese
REASON_WORDS_ZH = {
    "tokens": "词元",
    "USD": "美元",
    "auth": "认证",
    "balance": "余额",
    "rate_limit": "限流",
    "transient": "临时错误",
    "bad_request": "请求无效",
    "config": "配置错误",
}


# status words and short labels as they appear in table cells
WORDS: dict[str, str] = {
    "pass": "通过",
    "fail": "未通过",
    "frozen": "已冻结",
    "under_review": "审查中",
    "rejected": "已拒绝",
    "reviewed": "已审查",
    "nominated": "已提名",
    "awaiting_approval": "待审批",
    "awaiting approval": "待审批",
    "approved_pending": "已批准，待提交",
    "submitting": "提交中",
    "submitted": "已提交",
    "official_pass": "官方通过",
    "official_fail": "官方未通过",
    "unknown": "未知",
    "idle": "空闲",
    "running": "运行中",
    "thinking": "思考中",
    "waiting": "等待中",
    "queued": "排队中",
    "outside agent (A2A)": "外部智能体（A2A）",
    "no action over A2A yet": "尚未通过 A2A 行动",
    "measured": "已测量",
    "exited": "已退出",
    "stopped": "已停止",
    "failed": "失败",
    "done": "完成",
    "offline": "离线",
    "accept": "接受",
    "accepted": "已接受",
    "reject": "拒绝",
    "approve": "批准",
    "approved": "已批准",
    "approved, remembered": "已批准并记住",
    "pending": "待审批",
    "grant revoked": "授权已撤销",
    "mode changed": "模式已更改",
    "unavailable": "不可用",
    "receipt": "回执",
    "tree SHA-256": "目录树 SHA-256",
    "commit": "提交记录",
    "experiment": "实验",
    "cases passed": "通过的用例",
    "executor": "执行者",
    "toolchain": "工具链",
    "input packs": "输入包",
    "(no change)": "（无改动）",
    "(no source change was logged)": "（没有记录源码改动）",
    "Target: ": "目标平台：",
    "Run ": "运行 ",
    ".": "。",
    "The team's workspace is not in this lab; shown is the last source change the team "
    "logged before this receipt (": "该队伍的工作区不在本实验室中；这里显示的是该队伍在此回执之前"
    "记录的最后一次源码改动（",
    "), not the whole diff from the baseline.": "），而不是相对基线的完整差异。",
    "Goal: the fewest estimated cycles (sum over the performance cases) with every local case "
    "within the precision standard; officially, the lowest prof_sum on the hidden cases. Local "
    "and official results are kept apart: a local pass is not an official one.": "目标：在所有本地"
    "用例都满足精度标准的前提下，估计周期数（各性能用例之和）最少；"
    "官方评测以隐藏用例上最低的 prof_sum 为准。"
    "本地结果与官方结果分开记录：本地通过不等于官方通过。",
    "Simulated data: this run is a demo or a recording, not a contest.": "模拟数据：此运行是演示"
    "或录制，不是真实比赛。",
    "Offline model: teams were driven by the scripted playbook.": (
        "离线模型：队伍由脚本化的剧本驱动。"
    ),
    "No team has a measured receipt yet.": "还没有队伍得到测量回执。",
    "No official result yet.": "还没有官方结果。",
    "No tool call of this run asked a person for approval.": "本次运行没有需要人工审批的工具调用。",
    "The Judger has not frozen a candidate in this run.": "评审在此运行中尚未冻结任何候选。",
    "The receipt names no trace for this case: figures only.": (
        "该回执没有此用例的追踪：仅显示数据。"
    ),
    "Best measured estimated cycles per team (local receipts) over time": "各队伍测得的最佳估计"
    "周期数随时间的变化（本地回执）",
    "demo (simulated)": "演示（模拟）",
    "this lab's run": "本实验室的运行",
    "this lab's run (simulated)": "本实验室的运行（模拟）",
    "imported, claims simulated": "导入的，声称为模拟",
    "imported, claims not simulated": "导入的，声称非模拟",
    "the Ascend C (msopgen) project, built and measured on a CPU (modelled cycles)": "Ascend C"
    "（msopgen）工程，在 CPU 上构建和测量（模型周期数）",
    "the C port of the operator (cachegrind cycles)": "算子的 C 移植版（cachegrind 周期数）",
    "the Ascend C (msopgen) project, built by the CANN toolkit": "Ascend C（msopgen）工程，由 CANN "
    "工具包构建",
    "rebuilt from the frozen bytes; source hash, receipt and tree policy checked": "按冻结的字节"
    "重新构建；已检查源码哈希、回执和目录树策略",
}


def _w(text: str) -> str:
    return WORDS.get(text, text)


def _addressee(to: str) -> str:
    return "所有队伍" if to == "all" else f" {to} "


# the rules reviewer's reasons (judger/review.py), found inside a review's text
RULE_REASONS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"the project's untouched template \(every editable file equals the "
            r"baseline\): not submitted, it would spend an official submission on "
            r"nothing new"
        ),
        "项目未改动的模板（每个可编辑文件都与基线相同）：不提交，否则会把一次官方提交浪费在没有新内容的代码上",
    ),
    (re.compile(r"no receipt for this source"), "此源码没有回执"),
    (re.compile(r"the receipt belongs to another source"), "回执属于另一份源码"),
    (re.compile(r"the receipt is (\w+), not measured"), r"回执状态为 \1，未完成测量"),
    (
        re.compile(r"the frozen bytes do not hash to the candidate's source SHA-256"),
        "冻结的字节与候选的源码 SHA-256 不符",
    ),
    (re.compile(r"(\S+): not an editable path"), r"\1：不是可编辑的路径"),
    (re.compile(r"(\S+): larger than (\d+) KiB"), r"\1：大于 \2 KiB"),
    (re.compile(r"(\S+): uses ([^,;]+)"), r"\1：使用了 \2"),
    (re.compile(r"local precision not fully verified \((\w+)\)"), r"本地精度未完全验证（\1）"),
]


def _rule_reasons(text: str) -> str:
    for pattern, replacement in RULE_REASONS:
        text = pattern.sub(replacement, text)
    return text


def _review(match: re.Match[str]) -> str:
    """`accept by rules: reason (notes: ...)` → 接受（rules）：reason（备注：...）"""
    verdict, reviewer, rest = match.group(1), match.group(2), match.group(3) or ""
    if rest.startswith(" (") and rest.endswith(")") and not rest.startswith(" (notes"):
        inner = rest[2:-1]
        rest = f"（{_w(inner)}）"
    rest = re.sub(r" \(notes: (.*)\)$", r"（备注：\1）", rest)
    if rest.startswith(": "):
        rest = "：" + rest[2:]
    if reviewer.startswith("rules"):  # the rules' own words; a model's reasons are its data
        rest = _rule_reasons(rest)
    return f"{_w(verdict)}（{reviewer}）{rest}"


Template = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]

SENTENCES: list[Template] = [
    (
        re.compile(r"^Teams: (\d+); model: (.*); task mode: (.*); events: (\d+)\.$"),
        lambda m: f"队伍：{m[1]}；模型：{m[2]}；任务模式：{_w(m[3])}；事件数：{m[4]}。",
    ),
    (re.compile(r"^Data: (.*)\.$"), lambda m: f"数据来源：{_w(m[1])}。"),
    (
        re.compile(r"^ \((.*)\), mode (\S+), created (.+)\.$"),
        lambda m: f"（{m[1]}），模式 {m[2]}，创建于 {m[3]}。",
    ),
    (re.compile(r"^, (.+)\.$"), lambda m: f"，{_w(m[1])}。"),
    (
        re.compile(
            r"^(\d+)\. (.+): (.+) estimated cycles \(baseline (.+), gain (.+)\), "
            r"receipt (.+), event #(.+)\.$"
        ),
        lambda m: (
            f"{m[1]}. {m[2]}：估计 {m[3]} 周期（基线 {m[4]}，提升 {m[5]}），"
            f"回执 {m[6]}，事件 #{m[7]}。"
        ),
    ),
    (
        re.compile(r"^Diff against the baseline \((.+) → (.+)\), op_host/ and op_kernel/:$"),
        lambda m: f"相对基线的差异（{m[1]} → {m[2]}），op_host/ 与 op_kernel/：",
    ),
    (
        re.compile(r"^Verified SOTA: submission (.+) of (.+), prof_sum (.+) µs \(event #(.+)\)\.$"),
        lambda m: f"已验证最佳：{m[2]} 的提交 {m[1]}，prof_sum {m[3]} µs（事件 #{m[4]}）。",
    ),
    (
        re.compile(r"^last: submitted a candidate \((.+)\) at (.+)$"),
        lambda m: f"最近：于 {m[2]} 提交了一个候选（{_w(m[1])}）",
    ),
    (
        re.compile(r"^last: sent a message to (.+) at (.+)$"),
        lambda m: f"最近：于 {m[2]} 向{_addressee(m[1])}发送了一条消息",
    ),
    (re.compile(r"^cycles (.+)$"), lambda m: f"周期数 {m[1]}"),
    (re.compile(r"^(\S+) of (\S+)$"), lambda m: f"{m[1]} / {m[2]}"),
    (re.compile(r"^(.+) \(est\.\)$"), lambda m: f"{m[1]}（估计）"),
    (re.compile(r"^(\w+) by ([^:;()]+?)((?:: | \().*)?$"), _review),
    (
        re.compile(
            r"^Pipeline of (.+?): bound pipe: (.+?)(?:; (.+) cycles on the slowest of "
            r"(.+) AI Cores \(cycle model (.+), SoC (.+)\))?\.$"
        ),
        lambda m: (
            f"{m[1]} 的流水线：瓶颈流水线 {m[2]}"
            + (
                f"；{m[4]} 个 AI Core 中最慢的一个用了 {m[3]} 周期（周期模型 {m[5]}，SoC {m[6]}）"
                if m[3]
                else ""
            )
            + "。"
        ),
    ),
    (
        re.compile(r"^Trace (.+) is not in this lab's blob store: figures only\.$"),
        lambda m: f"追踪 {m[1]} 不在本实验室的数据存储中：仅显示数据。",
    ),
    (
        re.compile(r"^Trace (.+) cannot be read \((.*)\): figures only\.$"),
        lambda m: f"无法读取追踪 {m[1]}（{m[2]}）：仅显示数据。",
    ),
    (
        re.compile(r"^Receipt (.+) is not in this lab's blob store: no pipeline figures\.$"),
        lambda m: f"回执 {m[1]} 不在本实验室的数据存储中：没有流水线数据。",
    ),
]


def sentence(text: str) -> str:
    """`text` in Chinese: an exact phrase, else the first template that matches, else as is."""
    if text in WORDS:
        return WORDS[text]
    for pattern, template in SENTENCES:
        if match := pattern.match(text):
            return template(match) if callable(template) else match.expand(template)
    return text


def reason_zh(reason: Reason) -> str:
    """A reason in Chinese, from its code: `word` values translated, the rest as they are."""
    kinds = dict((*SPECS[reason.code].params, *SPECS[reason.code].optional))
    values = {}
    for name, value in reason.params.items():
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        values[name] = REASON_WORDS_ZH.get(shown, shown) if kinds.get(name) == "word" else shown
    return REASONS_ZH[reason.code].format_map(_Missing(values))


class _Missing(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def _cell(value: object) -> object:
    """A cell: one sentence, or several joined by "; " (a candidate's reviews)."""
    if isinstance(value, Reason):
        return reason_zh(value)
    if not isinstance(value, str):
        return value
    whole = sentence(value)
    if whole != value or "; " not in value:
        return whole
    return "；".join(sentence(part) for part in _reviews(value))


def _reviews(text: str) -> list[str]:
    """Split at "; " that starts a new `verdict by` (a reason may hold "; " itself)."""
    return re.split(r"; (?=\w+ by )", text)


def _block(block: object) -> object:
    if isinstance(block, str):
        return sentence(block)
    if isinstance(block, Para):
        block.parts = [p if isinstance(p, Mono) else sentence(p) for p in block.parts]
    elif isinstance(block, Banner):
        block.text = sentence(block.text)
    elif isinstance(block, Figure):
        block.caption = sentence(block.caption)
    elif isinstance(block, Code) and block.language == "diff":
        block.text = WORDS.get(block.text, block.text)
    elif isinstance(block, Table):
        block.rows = [[_cell(cell) for cell in row] for row in block.rows]
    return block


def lang_of(value: str | None) -> Lang:
    """The report language a query or option names: Chinese for `zh` (or `zh-CN`), else English."""
    return "zh" if (value or "").lower().split("-")[0] == "zh" else "en"


def localise(doc: Document, lang: Lang) -> Document:
    """`doc` in `lang`: headings, statuses and the report's sentences (the run's data as is)."""
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
        section.blocks = [_block(block) for block in section.blocks]  # type: ignore[misc]
    return doc
