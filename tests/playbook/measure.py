"""Re-measure the playbook's kernel steps with the lab's cycle model (not a test).

For every step and alternative in resources/playbook/confusion_mul_grad/playbook.toml (plus the
template baseline and, for reference, tests/fixtures/kernels/fast_fused_blocked) this builds the
project, runs the harness under callgrind with the lab's fixed cache geometry on the 3 perf cases,
checks the outputs natively, and prints est_cycles = Ir + 10*(I1mr + D1mr + D1mw)
+ 100*(ILmr + DLmr + DLmw) per case and summed, then the Ir / L1-miss / LL-miss breakdown:

    cd /work/main && uv run python tests/playbook/measure.py      # everything (~1 min on 2 cores)
    uv run python tests/playbook/measure.py --only s1_fused_pass s5_sse2_vectors
    uv run python tests/playbook/measure.py --dir /some/overlay   # any op_kernel/ + op_host/ tree
    uv run python tests/playbook/measure.py --toml                # also print playbook.toml lines
    uv run python tests/playbook/measure.py --extra               # also shapes outside the perf set

--extra adds shapes the 3 perf cases do not cover (a wide column reduction, where the column tile
width matters); they get their own column and are not part of the sum.

Counts are deterministic for a fixed command line and environment (the stack, and with it every
stack variable's cache set, moves with the size of argv and the environment). So every variant
runs from the same paths (--work, default /tmp/jk-playbook-measure: harness copied to run/harness,
outputs in run/out/<case>) with a fixed two-variable environment, and differences between steps
are the kernels' alone. The lab's sandbox uses other paths, so its numbers can differ from these
by a few thousand cycles.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from justkernel.operators import (
    CaseSpec,
    build_project,
    check_pack_outputs,
    ensure_input_pack,
    load_operator,
    perf_cases,
    run_harness,
)

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "resources" / "playbook" / "confusion_mul_grad"
FAST_FIXTURE = REPO / "tests" / "fixtures" / "kernels" / "fast_fused_blocked"

# Not perf cases: shapes where the step alternatives differ for reasons the perf set cannot show.
EXTRA_CASES = (
    CaseSpec(
        id="w01_wide_col_f32",
        input0=(16384,),
        input1=(256, 16384),
        input2=(256, 16384),
        dtype="float32",
        axes=(0,),
        keep_dims=False,
        distribution="symmetric",
        seed=3101,
    ),
)

RUN_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
CACHE_ARGS = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=2097152,16,64"]
EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")


def est_cycles(c: dict[str, int]) -> int:
    return (
        c["Ir"]
        + 10 * (c["I1mr"] + c["D1mr"] + c["D1mw"])
        + 100 * (c["ILmr"] + c["DLmr"] + c["DLmw"])
    )


def parse_callgrind(path: Path) -> dict[str, int]:
    events: list[str] = []
    totals: list[int] = []
    for line in path.read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("totals:") or (line.startswith("summary:") and not totals):
            totals = [int(x) for x in line.split()[1:]]
    counts = dict(zip(events, totals, strict=False))
    return {e: counts.get(e, 0) for e in EVENTS}


def callgrind(harness: Path, case_dir: Path, out_dir: Path, entry: str) -> dict[str, int]:
    out_dir.mkdir(parents=True, exist_ok=True)
    cg_file = out_dir / "callgrind.out"
    argv = [
        "valgrind",
        "--tool=callgrind",
        "--cache-sim=yes",
        *CACHE_ARGS,
        f"--toggle-collect={entry}",
        f"--callgrind-out-file={cg_file}",
        str(harness),
        str(case_dir),
        str(out_dir),
    ]
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=600, env=RUN_ENV
    )
    if done.returncode != 0:
        raise RuntimeError(f"callgrind failed ({done.returncode}): {done.stderr[-2000:]}")
    return parse_callgrind(cg_file)


def overlay_project(template: Path, overlay: Path | None, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(template, dest, ignore=shutil.ignore_patterns("build"))
    if overlay is not None:
        for sub in ("op_kernel", "op_host"):
            if (overlay / sub).is_dir():
                shutil.copytree(overlay / sub, dest / sub, dirs_exist_ok=True)
    return dest


def targets(args: argparse.Namespace) -> list[tuple[str, Path | None]]:
    manifest = tomllib.loads((PLAYBOOK / "playbook.toml").read_text())
    found: list[tuple[str, Path | None]] = [("baseline", None)]
    if FAST_FIXTURE.is_dir():
        found.append(("fixture:fast_fused_blocked", FAST_FIXTURE))
    for step in [*manifest.get("steps", []), *manifest.get("alternatives", [])]:
        found.append((step["id"], PLAYBOOK / step["path"]))
    for d in args.dir or []:
        found.append((f"dir:{Path(d).name}", Path(d).resolve()))
    if args.only:
        found = [t for t in found if t[0] in args.only or t[0].split(":")[-1] in args.only]
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", nargs="*", help="step ids to measure (default: all)")
    ap.add_argument("--dir", nargs="*", help="extra overlay folders (op_kernel/, op_host/)")
    ap.add_argument("--work", default="/tmp/jk-playbook-measure", help="scratch folder")
    ap.add_argument("--jobs", type=int, default=2, help="parallel callgrind runs")
    ap.add_argument("--toml", action="store_true", help="print playbook.toml measured blocks")
    ap.add_argument("--extra", action="store_true", help="also measure EXTRA_CASES (not summed)")
    args = ap.parse_args()

    op = load_operator()
    work = Path(args.work)
    pack = ensure_input_pack(perf_cases(op), work / "packs", op)
    ids = pack.case_ids
    extra = ensure_input_pack(EXTRA_CASES, work / "packs", op) if args.extra else None
    extra_ids = extra.case_ids if extra else ()
    rows: list[tuple[str, dict[str, int], dict[str, dict[str, int]], bool]] = []
    t0 = time.monotonic()
    for name, overlay in targets(args):
        slug = name.replace(":", "_")
        project = overlay_project(op.project_dir, overlay, work / "projects" / slug)
        built = build_project(project, work / "builds" / slug, op)
        if not built.ok:
            print(f"{name}: build failed at {built.failed_step}\n{built.log}\n{built.problems}")
            return 1
        run = work / "run"
        if run.exists():
            shutil.rmtree(run)
        run.mkdir(parents=True)
        harness = Path(shutil.copy2(built.harness, run / "harness"))
        jobs = [(pack, cid) for cid in ids] + [(extra, cid) for cid in extra_ids]
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futs = {
                cid: pool.submit(
                    callgrind, harness, p.case_dir(cid), run / "out" / cid, op.build.kernel_entry
                )
                for p, cid in jobs
            }
            counts = {cid: f.result() for cid, f in futs.items()}
        # The outputs must also be right (native runs, same inputs).
        native = run / "native"
        for p, cid in jobs:
            run_harness(harness, p.case_dir(cid), native / cid)
        ok = all(c.passed for c in check_pack_outputs(pack, native))
        if extra:
            ok = ok and all(c.passed for c in check_pack_outputs(extra, native))
        rows.append((name, {cid: est_cycles(c) for cid, c in counts.items()}, counts, ok))
        print(f"  measured {name} ({time.monotonic() - t0:.0f}s)", file=sys.stderr)

    base = rows[0][1] if rows and rows[0][0] == "baseline" else None
    base_sum = sum(base[cid] for cid in ids) if base else None
    head = f"{'step':40s} " + " ".join(f"{cid:>13s}" for cid in ids)
    head += f" {'sum':>13s} {'vs base':>8s} {'ok':>3s}"
    head += "".join(f" {cid:>17s}" for cid in extra_ids)
    print(head)
    print("-" * len(head))
    for name, est, _, ok in rows:
        total = sum(est[cid] for cid in ids)
        speed = f"{base_sum / total:7.2f}x" if base_sum else ""
        line = f"{name:40s} " + " ".join(f"{est[cid] / 1e6:12.2f}M" for cid in ids)
        line += f" {total / 1e6:12.2f}M {speed:>8s} {'yes' if ok else 'NO':>3s}"
        line += "".join(f" {est[cid] / 1e6:16.2f}M" for cid in extra_ids)
        print(line)
    print()
    print("breakdown (Ir / L1 misses I1mr+D1mr+D1mw / LL misses ILmr+DLmr+DLmw), millions:")
    for name, _, counts, _ in rows:
        parts = []
        for cid in (*ids, *extra_ids):
            c = counts[cid]
            l1 = c["I1mr"] + c["D1mr"] + c["D1mw"]
            ll = c["ILmr"] + c["DLmr"] + c["DLmw"]
            parts.append(f"{cid[:3]} {c['Ir'] / 1e6:6.2f}/{l1 / 1e6:5.3f}/{ll / 1e6:5.3f}")
        print(f"  {name:38s} " + "  ".join(parts))
    if args.toml:
        print()
        for name, est, _, _ in rows:
            per = ", ".join(f"{cid} = {est[cid]}" for cid in ids)
            print(f"# {name}\nmeasured_est_cycles_sum = {sum(est[cid] for cid in ids)}")
            print(f"measured_est_cycles = {{ {per} }}")
            if extra_ids:
                per = ", ".join(f"{cid} = {est[cid]}" for cid in extra_ids)
                print(f"measured_extra_est_cycles = {{ {per} }}  # --extra, not perf cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
