"""A JustKernel worker for hosts that do not install the package.

The lab uploads this folder once per version to `<scratch>/bundles/<hash>/` as

    jk_worker.py                      this launcher
    lib/justkernel/...                the package's code (the same files the lab runs)
    lib/justkernel/resources/operators/...   the operator definitions it needs

and starts `PYTHON jk_worker.py serve --scratch S --toolchain cpu` over SSH (`bundle_python`
in hosts.toml). The host needs Python 3.11+ with numpy and pydantic 2, and the toolchain's own
tools (gcc, valgrind, bubblewrap for `cpu`); it needs neither the lab's other dependencies nor
an installed package. Commands: serve, run-job JOB_DIR [--packs DIR], info.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

LIB = Path(__file__).resolve().parent / "lib"
sys.path.insert(0, str(LIB))  # this bundle's code first, whatever else is installed


def main() -> int:
    parser = argparse.ArgumentParser(prog="jk_worker", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("serve", "info"):
        sub = commands.add_parser(name)
        sub.add_argument("--scratch", type=Path, default=Path("/tmp/justkernel"))
        sub.add_argument("--toolchain", default="cpu")
    run = commands.add_parser("run-job")
    run.add_argument("job_dir", type=Path)
    run.add_argument("--packs", type=Path, default=None)
    args = parser.parse_args()

    if args.command == "serve":
        from justkernel.workers.worker_session import serve_stdio

        asyncio.run(serve_stdio(args.scratch, args.toolchain))
        return 0
    if args.command == "info":
        from justkernel.workers.worker_entry import Toolchains, open_dir, worker_info

        folder = open_dir(args.scratch)
        print(json.dumps(worker_info(Toolchains(folder / "toolchains"), args.toolchain, folder)))
        return 0
    from justkernel.workers.worker_entry import run_job_dir

    try:
        receipt = asyncio.run(
            run_job_dir(
                args.job_dir.resolve(),
                packs_dir=args.packs,
                progress=lambda stage: print(stage, file=sys.stderr, flush=True),
            )
        )
    except Exception as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    print(receipt.model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
