"""Re-measure the Ascend C playbook's steps with the `ascendc-cpu` toolchain (not a test).

For the template baseline and every step and alternative in
resources/playbook/confusion_mul_grad/ascendc/playbook.toml this lays the step's files over the
Ascend C project template, runs a full job through the real toolchain (real g++, real sandbox:
the 15 local cases and the 3 perf cases) and prints the modelled cycles per perf case, the bound
pipe and which cases failed:

    cd /work/main && uv run python tests/playbook/measure_ascendc.py    # everything
    uv run python tests/playbook/measure_ascendc.py --only baseline s4_multi_core
    uv run python tests/playbook/measure_ascendc.py --dir /some/overlay  # op_host/, op_kernel/
    uv run python tests/playbook/measure_ascendc.py --pipes  # busy cycles per pipe too

The cycle model is deterministic: the same source gives the same figures on any machine.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.playbook.ascendc_support import (  # noqa: E402
    BASELINE,
    full_jobs,
    playbook,
    projects,
    step_project,
)
from tests.toolchains.ascendc_cpu.ladder_support import PERF_CASES, Ran  # noqa: E402


def overlay_files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def row(name: str, ran: Ran) -> str:
    r = ran.receipt
    cycles = ran.cycles()
    bound = {c.case_id: c.pipeline.bound_pipe for c in r.cycles if c.pipeline is not None}
    figures = "".join(f"{cycles.get(c, 0):>14,}" for c in PERF_CASES)
    total = r.total_est_cycles or 0
    failing = ",".join(r.failing_cases()) or "-"
    pipes = "/".join(bound.get(c, "?") for c in PERF_CASES)
    return f"{name:<30}{r.status.value:<14}{figures}{total:>14,}  {pipes:<14} {failing}"


def pipes(ran: Ran) -> str:
    """Busy cycles per pipe of the slowest core, per perf case, and the block dim."""
    parts = []
    for c in ran.receipt.cycles:
        if c.pipeline is not None:
            busy = " ".join(f"{p}={f.busy:,}" for p, f in sorted(c.pipeline.pipes.items()))
            parts.append(f"    {c.case_id}: blocks={c.pipeline.block_dim} {busy}")
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", default=[], help="step ids (and/or 'baseline')")
    parser.add_argument("--dir", type=Path, help="measure this overlay folder instead")
    parser.add_argument("--pipes", action="store_true", help="also busy cycles per pipe")
    args = parser.parse_args()
    if args.dir is not None:
        jobs = {args.dir.name: step_project(args.dir.name, overlay_files(args.dir))}
    else:
        jobs = projects(playbook(), tuple(args.only))
    runs = asyncio.run(full_jobs(jobs))
    head = f"{'step':<30}{'status':<14}" + "".join(f"{c:>14}" for c in PERF_CASES)
    print(head + f"{'total':>14}  bound pipes    failing")
    for name, ran in runs.items():
        print(row(name, ran))
        if args.pipes:
            print(pipes(ran))
        if ran.receipt.detail and name != BASELINE and ran.receipt.status.value != "measured":
            print(f"    {ran.receipt.detail[:400]}")


if __name__ == "__main__":
    main()
