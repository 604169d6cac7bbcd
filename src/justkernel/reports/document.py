"""A small document model rendered two ways, so the Markdown and the HTML report cannot say
different things: headings, paragraphs, tables, code (diffs) and figures (SVG)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from html import escape
from typing import Any

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;
color:#1b1f24}table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}
code{font-family:ui-monospace,monospace}.note{color:#57606a}
.banner{background:#fff8c5;border:1px solid #d4a72c;padding:8px;margin:8px 0}"""


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


Block = str | Table | Code | Figure | Banner


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    level: int = 2


@dataclass
class Document:
    title: str
    sections: list[Section] = field(default_factory=list)


def _cell(value: Any) -> str:
    return "—" if value is None else str(value)


def _md_cell(value: Any) -> str:
    return _cell(value).replace("|", "\\|").replace("\n", " ")


def to_markdown(doc: Document) -> str:
    out = [f"# {doc.title}", ""]
    for section in doc.sections:
        out += ["#" * section.level + " " + section.title, ""]
        for block in section.blocks:
            if isinstance(block, str):
                out += [block, ""]
            elif isinstance(block, Banner):
                out += [f"> **{block.text}**", ""]
            elif isinstance(block, Table):
                out.append("| " + " | ".join(_md_cell(h) for h in block.header) + " |")
                out.append("|" + "---|" * len(block.header))
                out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
                out.append("")
            elif isinstance(block, Code):
                fence = "~~~~" if "```" in block.text else "```"
                out += [fence + block.language, block.text.rstrip("\n"), fence, ""]
            elif isinstance(block, Figure):
                src = block.file_name or (
                    "data:image/svg+xml;base64," + base64.b64encode(block.svg.encode()).decode()
                )
                out += [f"![{block.caption}]({src})", ""]
    return "\n".join(out).rstrip() + "\n"


def to_html(doc: Document) -> str:
    out = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(doc.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(doc.title)}</h1>",
    ]
    for section in doc.sections:
        level = min(max(section.level, 2), 4)
        out.append(f"<h{level}>{escape(section.title)}</h{level}>")
        for block in section.blocks:
            if isinstance(block, str):
                out.append(f"<p>{escape(block)}</p>")
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
