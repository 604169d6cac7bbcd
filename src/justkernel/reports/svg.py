"""The best-cycles-over-time plot as a standalone SVG (no script, no external font or CDN), one
step line per team: the best measured cycles so far, changing only on a receipt that beat it."""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

LEGEND_MAX = 16
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def _t(ts: str) -> float:
    return datetime.fromisoformat(ts).timestamp()


def compact(value: float) -> str:
    """A figure in three significant digits with k, M or G (axis labels)."""
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:.3g}"


def cycles_plot(series: list[dict[str, Any]], width: int = 720, height: int = 300) -> str:
    """`series`: [{"label", "points": [[ts, seq, cycles], ...]}] as `RunState.series()`."""
    pad_l, pad_r, pad_t, pad_b = 64, 150, 16, 36
    points = [(_t(p[0]), p[2]) for s in series for p in s["points"]]
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>'
    )
    if not points:
        return head + '<text x="20" y="40">no measured receipt yet</text></svg>'
    t0, t1 = min(p[0] for p in points), max(p[0] for p in points)
    c0, c1 = min(p[1] for p in points), max(p[1] for p in points)
    t1, c1 = max(t1, t0 + 1), max(c1, c0 + 1)
    plot_w, plot_h = width - pad_l - pad_r, height - pad_t - pad_b

    def x(t: float) -> float:
        return pad_l + (t - t0) / (t1 - t0) * plot_w

    def y(c: float) -> float:
        return pad_t + (1 - (c - c0) / (c1 - c0)) * plot_h

    parts = [head]
    parts.append(
        f'<line x1="{pad_l}" y1="{pad_t + plot_h}" x2="{pad_l + plot_w}" '
        f'y2="{pad_t + plot_h}" stroke="#888"/>'
        f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{pad_t + plot_h}" stroke="#888"/>'
    )
    for frac in (0.0, 0.5, 1.0):
        value = c0 + frac * (c1 - c0)
        label = compact(value)
        parts.append(
            f'<text x="{pad_l - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{label}</text>'
        )
    parts.append(
        f'<text x="{pad_l}" y="{height - 8}">0 s</text>'
        f'<text x="{pad_l + plot_w}" y="{height - 8}" text-anchor="end">{t1 - t0:.0f} s</text>'
    )
    for index, line in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        coords: list[str] = []
        for n, (ts, _seq, cycles) in enumerate(line["points"]):
            px, py = x(_t(ts)), y(cycles)
            if n:
                coords.append(f"{px:.1f},{float(coords[-1].split(',')[1]):.1f}")
            coords.append(f"{px:.1f},{py:.1f}")
        last_x = x(t1)
        coords.append(f"{last_x:.1f},{float(coords[-1].split(',')[1]):.1f}")
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(coords)}"/>'
        )
        ly = pad_t + 14 * index + 8
        if index >= LEGEND_MAX:
            continue
        parts.append(
            f'<rect x="{width - pad_r + 12}" y="{ly - 8}" width="10" height="10" fill="{color}"/>'
            f'<text x="{width - pad_r + 26}" y="{ly + 1}">{escape(str(line["label"]))}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
