"""What a toolchain's version and receipts record about the machine it runs on."""

from __future__ import annotations

import subprocess
from pathlib import Path


def tool_version(argv: list[str]) -> str | None:
    """The first line `argv` (say `gcc --version`) prints, or None if it does not run."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines else None


def cpu_model() -> str | None:
    """/proc/cpuinfo's model name (libc picks memset/memcpy variants by CPU)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None
