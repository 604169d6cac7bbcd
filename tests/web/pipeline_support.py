"""A run holding a real ascendc-cpu receipt: the template's full job (evaluated once per test
process through the real toolchain, `toolchain_support.baseline_receipt`), its receipt JSON and
trace blobs copied into the web server's blob store, and an `experiment.receipt` event naming
the receipt as the agent tool writes it."""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path

from justkernel.agents.tools import receipt_summary
from justkernel.core.pipeline_trace import TRACE_SUFFIX
from justkernel.core.receipts import Receipt
from justkernel.events import NewEvent
from justkernel.lab import Lab
from tests.toolchains.ascendc_cpu.toolchain_support import baseline_receipt, blob
from tests.web.synthetic import in_lab, write_run

TEAM = "team-asc"


def real_receipt() -> Receipt:
    """In a thread of its own: sync Playwright may own this thread's event loop."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, baseline_receipt()).result()


def trace_shas(receipt: Receipt) -> dict[str, str]:
    return {
        c.case_id: log.sha256
        for c in receipt.cycles
        for log in c.logs
        if log.name.endswith(TRACE_SUFFIX)
    }


def write_pipeline_run(
    lab_dir: Path, receipt: Receipt, name: str = "ascendc-cpu run"
) -> tuple[str, str]:
    """(run id, receipt blob SHA-256) of a new run in the server's store."""
    traces = [blob(sha) for sha in trace_shas(receipt).values()]

    async def work(lab: Lab) -> tuple[str, str]:
        sha = lab.blobs.put(receipt.model_dump_json(indent=1).encode())
        for data in traces:
            lab.blobs.put(data)
        events = [
            NewEvent(
                "team.registered",
                {"display_name": "Ascend-1", "model_preset": "offline", "provider": "offline"},
                TEAM,
            ),
            NewEvent(
                "experiment.receipt",
                {
                    "experiment": 1,
                    "commit": "0" * 40,
                    "tree_sha256": receipt.source_sha256,
                    "receipt": receipt_summary(receipt, receipt.total_est_cycles),
                    "input_packs": receipt.input_packs,
                    "executor": receipt.executor.model_dump(mode="json"),
                    "blobs": [sha],
                },
                TEAM,
            ),
        ]
        # the run's target is the receipt's (the header's badge shows it)
        return await write_run(lab, name, events, toolchain=receipt.executor.toolchain_id), sha

    return in_lab(lab_dir / "data", lab_dir / "config", work)
