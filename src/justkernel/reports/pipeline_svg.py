"""A receipt's pipeline chart for the report: per AI Core, one lane per pipe (MTE2 / V / MTE3 /
S, as msprof's simulator chart), as a standalone SVG (no script, no external font), drawn from
`pipeline_timeline.build_timeline`. A downsampled lane's buckets are shaded by busy share."""

from __future__ import annotations

from html import escape
from typing import Any

from justkernel.reports.svg import compact

COLORS = {"MTE2": "#1f6feb", "V": "#2da44e", "MTE3": "#8250df", "S": "#bf8700"}
ROW, CORE_GAP, LABEL, AXIS, RIGHT = 14, 6, 100, 20, 12


def pipeline_svg(timeline: dict[str, Any], bound_pipe: str | None, width: int = 760) -> str:
    """The chart of one perf case; `bound_pipe`'s label is drawn bold."""
    rows: list[tuple[dict[str, Any], dict[str, Any], int]] = []
    y = AXIS
    for core in timeline["cores"]:
        for lane in core["lanes"]:
            rows.append((core, lane, y))
            y += ROW
        y += CORE_GAP
    height = y + 4
    plot = width - LABEL - RIGHT
    total = max(1, int(timeline["total"]))

    def x(cycle: float) -> float:
        return LABEL + cycle / total * plot

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="pipeline" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" '
        f'font-size="10"><rect width="{width}" height="{height}" fill="#ffffff"/>'
    ]
    for i in range(5):
        cycle = total * i / 4
        anchor = "end" if i == 4 else "start"
        parts.append(
            f'<line x1="{x(cycle):.1f}" y1="{AXIS - 4}" x2="{x(cycle):.1f}" y2="{height}" '
            f'stroke="#d0d7de"/><text x="{x(cycle):.1f}" y="12" text-anchor="{anchor}" '
            f'fill="#57606a">{compact(cycle)}</text>'
        )
    last_core = None
    for core, lane, top in rows:
        if core is not last_core:
            parts.append(f'<text x="2" y="{top + ROW - 3}">{escape(str(core["name"]))}</text>')
            last_core = core
        pipe = str(lane["pipe"])
        weight = ' font-weight="bold"' if pipe == bound_pipe else ""
        parts.append(f'<text x="{LABEL - 40}" y="{top + ROW - 3}"{weight}>{escape(pipe)}</text>')
        color = COLORS.get(pipe, "#6e7781")
        seg = lane["segments"]
        rects = []
        for i in range(0, len(seg), 3):
            start, end, busy = seg[i], seg[i + 1], seg[i + 2]
            x0, w = x(start), max(0.5, x(end) - x(start))
            shade = max(0.2, busy / max(1, end - start)) if lane["downsampled"] else 0.95
            rects.append(
                f'<rect x="{x0:.1f}" y="{top + 2}" width="{w:.1f}" height="{ROW - 4}" '
                f'fill-opacity="{shade:.2f}"/>'
            )
        parts.append(f'<g fill="{color}">{"".join(rects)}</g>')
    parts.append("</svg>")
    return "".join(parts)
