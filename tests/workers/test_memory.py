"""Freed large buffers leave the lab process (glibc's dynamic mmap threshold turned off)."""

from __future__ import annotations

import subprocess
import sys

SCENARIO = """
import sys
import numpy as np
from justkernel.workers.memory import return_large_buffers

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024

if sys.argv[1] == "fixed":
    assert return_large_buffers()
first = np.ones(2 << 20)  # 16 MB, mapped on its own; freeing it raises glibc's threshold
del first
base = rss_mb()
buffers, small = [], []
for _ in range(8):  # an evaluation's large buffers, with small objects that outlive them
    buffers.append(np.ones(1 << 20))
    small.append(np.ones(20_000))
del buffers
print(rss_mb() - base)
"""


def _retained_mb(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", SCENARIO, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout.strip())


def test_freed_large_buffers_are_returned_to_the_system() -> None:
    # glibc's default keeps the 64 MB freed here when run alone (65 MB retained), but not in a
    # child of the full suite's process (1 MB, for a reason not yet found), so the default is
    # shown beside the figure, not required: the fixed threshold must return the buffers
    default = _retained_mb("default")
    fixed = _retained_mb("fixed")
    assert fixed < 8, f"{fixed} MB retained with the threshold fixed, {default} MB without"
