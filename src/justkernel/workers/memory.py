"""Large buffers go back to the system when freed: glibc's dynamic mmap threshold is turned off.

glibc serves an allocation above M_MMAP_THRESHOLD (128 KiB) with its own mapping, unmapped on
free; but when such a block is freed it raises the threshold to that block's size (up to 32 MiB),
so later large buffers (the precision check's chunks, a perf trace read whole, its gzip output,
numpy temporaries in worker threads) come from the heaps instead, where a freed block stays
resident as long as anything small lives above it. The lab process then keeps its evaluation
peak for good: 4 full evaluations left 190 MB RSS (132 MB with the threshold fixed), and a
freed 64 MB of buffers stayed resident (1 MB with it fixed; tests/workers/test_memory.py).
Setting the threshold explicitly turns the adjustment off (mallopt(3), M_MMAP_THRESHOLD).
"""

from __future__ import annotations

import ctypes
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number (malloc.h)
THRESHOLD_BYTES = 128 * 1024  # glibc's own default, now fixed


def return_large_buffers() -> bool:
    """Fix glibc's mmap threshold for this process (idempotent); False where there is no
    glibc mallopt (another libc or OS: nothing to do)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES))
