"""Builds and runs ops_main.cpp, the script-driven driver of the ascendc-cpu vector API tests.

Why one driver: compiling a C++ program per case would cost seconds each; the tests describe
UB buffers and API calls as a small script, and one binary (compiled once per session) runs them.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from justkernel.paths import resources_dir

HERE = Path(__file__).parent
DRIVER_SRC = HERE / "ops_main.cpp"
DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32}


def library_include() -> Path:
    """The ascendc-cpu header tree (resources/ascendc_cpu/include)."""
    return resources_dir() / "ascendc_cpu" / "include"


@functools.cache
def build_dir() -> Path:
    """One temp folder per test session, removed at exit."""
    d = Path(tempfile.mkdtemp(prefix="jk-ascendc-ops-"))
    atexit.register(shutil.rmtree, d, True)
    return d


@functools.cache
def driver() -> Path:
    """Compile ops_main.cpp once per session (-O0: compiles 2-3x faster, the cases are tiny)."""
    out = build_dir() / "ops_main"
    cmd = [
        "g++",
        "-std=c++17",
        "-O0",
        "-fno-strict-aliasing",
        f"-I{library_include()}",
        f"-I{HERE}",
        str(DRIVER_SRC),
        "-o",
        str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"ops_main.cpp does not compile:\n{proc.stderr[-4000:]}")
    return out


def site_line(marker: str) -> int:
    """Line number of the driver line carrying `// SITE:<marker>`."""
    for n, line in enumerate(DRIVER_SRC.read_text().splitlines(), start=1):
        if f"// SITE:{marker}" in line:
            return n
    raise AssertionError(f"no SITE:{marker} in ops_main.cpp")


@dataclass
class Result:
    """What one script run produced: dumped buffers, the misuse record, per-op stats."""

    outputs: dict[str, np.ndarray]
    misuse: dict | None
    stats: dict[str, tuple[int, int]]
    returncode: int


@dataclass
class Script:
    """A driver script under construction; `run()` executes it."""

    lines: list[str] = field(default_factory=list)
    dumps: dict[str, tuple[Path, str, int]] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(dir=build_dir())))

    def alloc(self, name: str, dt: str, n: int, data: np.ndarray | None = None) -> Script:
        """A UB buffer of n elements; `data` (cast to dt) is written with SetValue."""
        self.lines.append(f"alloc {name} {dt} {n}")
        self.dtypes[name] = dt
        if data is not None:
            self.fill(name, data)
        return self

    def fill(self, name: str, data: np.ndarray) -> Script:
        path = self.folder / f"in_{name}_{len(self.lines)}.bin"
        np.ascontiguousarray(data, dtype=DTYPES[self.dtypes[name]]).tofile(path)
        self.lines.append(f"fill {name} {path}")
        return self

    def view(self, name: str, src: str, k: int) -> Script:
        """name = src[k] (element offset)."""
        self.lines.append(f"view {name} {src} {k}")
        self.dtypes[name] = self.dtypes[src]
        return self

    def call(self, *tokens: object) -> Script:
        self.lines.append("call " + " ".join(str(t) for t in tokens))
        return self

    def dump(self, name: str, n: int, as_dt: str | None = None) -> Script:
        path = self.folder / f"out_{name}.bin"
        self.lines.append(f"dump {name} {path} {n}")
        self.dumps[name] = (path, as_dt or self.dtypes[name], n)
        return self

    def stats(self) -> Script:
        self.lines.append("stats")
        return self

    def run(self) -> Result:
        script = self.folder / "script.txt"
        script.write_text("\n".join(self.lines) + "\n")
        proc = subprocess.run(
            [str(driver()), str(script)], capture_output=True, text=True, timeout=60, check=False
        )
        if proc.returncode not in (0, 7):
            raise AssertionError(f"driver failed ({proc.returncode}): {proc.stderr[-2000:]}")
        misuse = None
        stats: dict[str, tuple[int, int]] = {}
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                misuse = json.loads(line)
            elif line.startswith("STAT "):
                _, op, _pipe, calls, cycles = line.split()
                stats[op] = (int(calls), int(cycles))
        outputs = {}
        if proc.returncode == 0:
            for name, (path, dt, _n) in self.dumps.items():
                outputs[name] = np.fromfile(path, dtype=DTYPES[dt])
        return Result(outputs, misuse, stats, proc.returncode)


def run_ok(script: Script) -> Result:
    """Run a script that must not misuse the API."""
    res = script.run()
    assert res.misuse is None, res.misuse
    return res


def positions(repeats: int, lanes: list[int], blk: int, rep: int, esize: int) -> list[list[int]]:
    """Element index touched by each (repeat, lane): the documented stride layout
    (atlasascendc_api_07_0047): repeat r, lane i -> r*rep*32 + (i // per_block)*blk*32 + rest."""
    per_block = 32 // esize
    out = []
    for r in range(repeats):
        row = []
        for i in lanes:
            byte = r * rep * 32 + (i // per_block) * blk * 32 + (i % per_block) * esize
            row.append(byte // esize)
        out.append(row)
    return out
