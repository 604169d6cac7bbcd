"""The cycle model: callgrind with a fixed cache geometry, counting only the kernel entry.

Why callgrind and not cachegrind: valgrind 3.19 (Debian 12) has no cachegrind
`--toggle-collect`; callgrind's counts everything executed while the kernel entry is on the
stack, including the memset/memcpy it calls, so no work can hide in libc. The harness runs
with its default cache flush before the kernel, so the kernel starts from cold caches.

    est_cycles = Ir + 10 * (I1mr + D1mr + D1mw) + 100 * (ILmr + DLmr + DLmw)

Fixed sandbox paths, environment and command line make the counts bit-identical run to run
and folder to folder.
"""

from __future__ import annotations

from justkernel.core.receipts import CycleCounters

CACHE_GEOMETRY = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=2097152,16,64")
L1_MISS_WEIGHT = 10
LL_MISS_WEIGHT = 100
CALLGRIND_OUT = "/sandbox/out/callgrind.out"  # fixed: callgrind writes it into its output
CYCLE_MODEL = (
    f"Ir + {L1_MISS_WEIGHT}*(I1mr+D1mr+D1mw) + {LL_MISS_WEIGHT}*(ILmr+DLmr+DLmw); "
    "callgrind --cache-sim=yes " + " ".join(CACHE_GEOMETRY)
)


class CallgrindParseError(ValueError):
    """The callgrind output lacks an `events:` line or a totals line."""


def callgrind_argv(entry: str, program: list[str]) -> list[str]:
    """valgrind's command line; only the kernel `entry` (and its callees) is counted."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--cache-sim=yes",
        *CACHE_GEOMETRY,
        f"--toggle-collect={entry}",
        f"--callgrind-out-file={CALLGRIND_OUT}",
        *program,
    ]


def parse_callgrind(text: str) -> CycleCounters:
    """Totals from a callgrind output file: the `events:` names and the `totals:` line
    (older writers put them on `summary:`)."""
    events: list[str] | None = None
    totals: list[int] | None = None
    summary: list[int] | None = None
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("totals:"):
            totals = [int(x) for x in line.split()[1:]]
        elif line.startswith("summary:"):
            summary = [int(x) for x in line.split()[1:]]
    values = totals if totals is not None else summary
    if events is None or values is None:
        raise CallgrindParseError("callgrind output has no events/totals lines")
    counts = dict.fromkeys(events, 0)
    counts.update(zip(events, values, strict=False))
    needed = set(CycleCounters.model_fields)
    missing = needed - set(counts)
    if missing:
        raise CallgrindParseError(f"callgrind output lacks events {sorted(missing)}")
    return CycleCounters(**{name: counts[name] for name in needed})


def est_cycles(c: CycleCounters) -> int:
    """The documented cycle estimate from raw counters."""
    l1 = c.I1mr + c.D1mr + c.D1mw
    ll = c.ILmr + c.DLmr + c.DLmw
    return c.Ir + L1_MISS_WEIGHT * l1 + LL_MISS_WEIGHT * ll
