"""A small document model rendered two ways, so the Markdown and the HTML report cannot say
different things: headings, paragraphs, tables, code (diffs) and figures (SVG).

Every string in the model is plain text, never markup: the run's and teams' names, ids, plan
text and reasons come from teams and imported bundles, so both renderers escape all of it (the
HTML one with `html.escape`, the Markdown one with `md_escape`). The only inline markup is a
`Mono` part of a `Para`, rendered as a code span or `<code>`.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from html import escape
from typing import Any

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;
color:#1b1f24}table{border-collapse:collapse;margin:8px 0 16px;font-size:13px;display:block;
max-width:100%;overflow-x:auto}td{overflow-wrap:anywhere;min-width:4em}svg{max-width:100%;height:auto}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}
code{font-family:ui-monospace,monospace}.note{color:#57606a}
.banner{background:#fff8c5;border:1px solid #d4a72c;padding:8px;margin:8px 0}"""


@dataclass
class Mono:
    """Inline code: an id, a command or an event kind, in a monospace font."""

    text: str


@dataclass
class Para:
    """A paragraph of plain-text parts and inline code parts."""

    parts: list[str | Mono]

    def __init__(self, *parts: str | Mono) -> None:
        self.parts = list(parts)


@dataclass
class Table:
    header: list[str]
    rows: list[list[Any]]


@dataclass
class Code:
    text: str
    language: str = ""


@dataclass
class Figure:
    svg: str
    caption: str
    file_name: str | None = None  # Markdown refers to this file when set, else a data URI


@dataclass
class Banner:
    text: str


Block = str | Para | Table | Code | Figure | Banner


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    level: int = 2


@dataclass
class Document:
    title: str
    sections: list[Section] = field(default_factory=list)
    lang: str = "en"  # the headings' language (reports.i18n), the HTML page's lang attribute


# Markdown's inline punctuation (emphasis, links and images, code, table cells,
# strikethrough, backslash); `<`, `>` and `&` become entities instead, so that no viewer
# that renders raw HTML (CommonMark and GitHub both do) sees a tag or an entity.
_MD_PUNCT = re.compile(r"([\\`*_\[\]|~])")
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# What opens a block when it starts a line: a heading, a list item, an ordered item, a setext
# underline (a quote's `>` is an entity already); and a heading's closing hashes at the end.
_MD_LINE_START = re.compile(r"^(\s*)([-+=#]|\d+[.)])")
_MD_TRAILING_HASH = re.compile(r"#(\s*)$")


def md_escape(text: str, *, line_start: bool = True) -> str:
    """`text` as Markdown that every renderer shows as exactly that text, on one line.

    Untrusted strings (a run named `<img src=x onerror=...>`, a team called `# x`) must not
    become HTML elements, links, emphasis or blocks in a Markdown viewer: newlines become
    spaces, `<`, `>` and `&` become entities, Markdown punctuation gets a backslash, and a
    leading list, quote or heading marker is escaped too (`line_start=False` for a table
    cell, where no block can open, keeps `1.5` as it is).
    """
    flat = " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text
    escaped = _MD_PUNCT.sub(r"\\\1", flat)
    escaped = "".join(_MD_ENTITIES.get(ch, ch) for ch in escaped)
    escaped = _MD_TRAILING_HASH.sub(r"\\#\1", escaped)
    if not line_start:
        return escaped
    return _MD_LINE_START.sub(lambda m: m.group(1) + _line_start(m.group(2)), escaped, count=1)


def _line_start(marker: str) -> str:
    return "\\" + marker if not marker[0].isdigit() else marker[:-1] + "\\" + marker[-1]


def _md_code_span(text: str) -> str:
    """A code span that no backtick inside `text` can close (CommonMark: a run of backticks
    longer than any in the content, padded with spaces when it starts or ends with one)."""
    flat = " ".join(text.splitlines())
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def _md_fence(text: str) -> str:
    """A code fence longer than any backtick run in the code, so the code cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _md_para(block: str | Para) -> str:
    parts = block.parts if isinstance(block, Para) else [block]
    return "".join(_md_code_span(p.text) if isinstance(p, Mono) else md_escape(p) for p in parts)


def _html_para(block: str | Para) -> str:
    parts = block.parts if isinstance(block, Para) else [block]
    return "".join(
        f"<code>{escape(p.text)}</code>" if isinstance(p, Mono) else escape(p) for p in parts
    )


def _cell(value: Any) -> str:
    return "—" if value is None else str(value)


def _md_cell(value: Any) -> str:
    return md_escape(_cell(value), line_start=False)


def to_markdown(doc: Document) -> str:
    out = [f"# {md_escape(doc.title)}", ""]
    for section in doc.sections:
        out += ["#" * section.level + " " + md_escape(section.title), ""]
        for block in section.blocks:
            if isinstance(block, str | Para):
                out += [_md_para(block), ""]
            elif isinstance(block, Banner):
                out += [f"> **{md_escape(block.text)}**", ""]
            elif isinstance(block, Table):
                out.append("| " + " | ".join(_md_cell(h) for h in block.header) + " |")
                out.append("|" + "---|" * len(block.header))
                out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
                out.append("")
            elif isinstance(block, Code):
                fence = _md_fence(block.text)
                out += [fence + block.language, block.text.rstrip("\n"), fence, ""]
            elif isinstance(block, Figure):
                src = block.file_name or (
                    "data:image/svg+xml;base64," + base64.b64encode(block.svg.encode()).decode()
                )
                src = src.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
                out += [f"![{md_escape(block.caption)}]({src})", ""]
    return "\n".join(out).rstrip() + "\n"


def to_html(doc: Document) -> str:
    out = [
        f"<!doctype html><html lang='{'zh-CN' if doc.lang == 'zh' else 'en'}'>"
        "<head><meta charset='utf-8'>",
        f"<title>{escape(doc.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(doc.title)}</h1>",
    ]
    for section in doc.sections:
        level = min(max(section.level, 2), 4)
        out.append(f"<h{level}>{escape(section.title)}</h{level}>")
        for block in section.blocks:
            if isinstance(block, str | Para):
                out.append(f"<p>{_html_para(block)}</p>")
            elif isinstance(block, Banner):
                out.append(f"<div class='banner'>{escape(block.text)}</div>")
            elif isinstance(block, Table):
                head = "".join(f"<th>{escape(_cell(h))}</th>" for h in block.header)
                rows = "".join(
                    "<tr>" + "".join(f"<td>{escape(_cell(c))}</td>" for c in row) + "</tr>"
                    for row in block.rows
                )
                out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
            elif isinstance(block, Code):
                out.append(f"<pre><code>{escape(block.text)}</code></pre>")
            elif isinstance(block, Figure):
                out.append(f"<figure>{block.svg}<figcaption>{escape(block.caption)}</figcaption>")
                out.append("</figure>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
