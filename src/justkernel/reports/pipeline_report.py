"""The report's pipeline blocks for one receipt: per perf case, the figures the receipt holds
(bound pipe, per-pipe busy cycles and utilisation) and the chart of its trace as an inline SVG.

Read from the lab's blob store: the receipt blob the best receipt's event names, then the
trace blob the receipt names for each case. What the store does not hold is said, never drawn.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from justkernel.core.pipeline_trace import NotATrace, load_trace
from justkernel.reports.document import Block, Figure, Table
from justkernel.reports.pipeline_svg import pipeline_svg
from justkernel.reports.pipeline_timeline import build_timeline, receipt_cases
from justkernel.store import BlobStore

SEGMENT_BUDGET = 2400  # rects per chart (all lanes): keeps a 40-core chart a few hundred KB
MAX_LANE_SEGMENTS = 240  # a 760-pixel chart shows no more


def _lane_segments(pipeline: dict[str, Any]) -> int:
    cores = pipeline.get("block_dim") or len(pipeline.get("cores") or []) or 1
    return max(24, min(MAX_LANE_SEGMENTS, SEGMENT_BUDGET // (4 * int(cores))))


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{value * 100:.1f} %"


def _case_blocks(blobs: BlobStore, case: dict[str, Any]) -> list[Block]:
    pipeline = case["pipeline"]
    bound = pipeline.get("bound_pipe")
    total = pipeline.get("total")
    blocks: list[Block] = [
        f"Pipeline of {case['case_id']}: bound pipe: {bound or '—'}; "
        f"{total:,} cycles on the slowest of {pipeline.get('block_dim') or '—'} AI Cores "
        f"(cycle model {pipeline.get('model')}, SoC {pipeline.get('soc')})."
        if isinstance(total, int)
        else f"Pipeline of {case['case_id']}: bound pipe: {bound or '—'}."
    ]
    rows = [
        [
            pipe + (" (bound)" if pipe == bound else ""),
            f"{figures.get('busy'):,}" if isinstance(figures.get("busy"), int) else None,
            _pct(figures.get("utilisation")),
            figures.get("instructions"),
        ]
        for pipe, figures in (pipeline.get("pipes") or {}).items()
        if isinstance(figures, dict)
    ]
    blocks.append(Table(["pipe", "busy cycles", "utilisation", "instructions"], rows))
    trace = case["trace_sha256"]
    if trace is None:
        blocks.append("The receipt names no trace for this case: figures only.")
        return blocks
    try:
        timeline = build_timeline(load_trace(blobs.get(trace)), _lane_segments(pipeline))
    except FileNotFoundError:
        blocks.append(f"Trace {trace} is not in this lab's blob store: figures only.")
        return blocks
    except (NotATrace, ValueError) as exc:
        blocks.append(f"Trace {trace} cannot be read ({exc}): figures only.")
        return blocks
    note = (
        f"; lanes downsampled to {timeline['max_segments']} buckets of "
        f"{timeline['bucket_cycles']:,} cycles, shaded by busy share"
        if timeline["downsampled"]
        else ""
    )
    caption = (
        f"{case['case_id']}: busy intervals per AI Core and pipe (MTE2, V, MTE3, S) over "
        f"{timeline['total']:,} cycles, from the trace blob {trace[:16]}{note}"
    )
    blocks.append(Figure(pipeline_svg(timeline, bound), caption))
    return blocks


def _receipt_blocks(blobs: BlobStore, receipt_sha: str) -> list[Block]:
    try:
        receipt = json.loads(blobs.get(receipt_sha))
    except FileNotFoundError:
        return [f"Receipt {receipt_sha} is not in this lab's blob store: no pipeline figures."]
    except ValueError:
        return []
    blocks: list[Block] = []
    for case in receipt_cases(receipt).values():
        blocks += _case_blocks(blobs, case)
    return blocks


async def pipeline_blocks(blobs: BlobStore, receipt_sha: str | None) -> list[Block]:
    """The blocks for a receipt with ascendc-cpu pipeline figures (none for other receipts)."""
    if not receipt_sha:
        return []
    return await asyncio.to_thread(_receipt_blocks, blobs, receipt_sha)
