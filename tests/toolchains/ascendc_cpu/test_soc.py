"""The SoC parameter file: every figure traced to a public source or labelled an assumption,
validated with errors that name the file and the key, and turned into the header the harness
compiles (whose figures the engine then uses)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from justkernel.toolchains.ascendc_cpu import soc
from tests.toolchains.ascendc_cpu.harness_support import LIBRARY

DEFAULT = soc.soc_path()
PUBLIC = ("msKPP", "hiascend", "gitcode", "support.huawei.com")


def test_every_figure_has_a_public_source_or_says_it_is_an_assumption() -> None:
    params = soc.load_soc()
    sources = [f.source for f in params.figures.__dict__.values()]
    for dtype in soc.DTYPE_BYTES:
        sources += [params.cost(op, dtype).source for op in soc.VECTOR_OPS]
    assert len(sources) == len(params.figures.__dict__) + 2 * len(soc.VECTOR_OPS)
    for source in sources:
        assert "assumption" in source or any(p in source for p in PUBLIC), source
    assert params.figures.ub_bytes.value == 196608
    assert (params.figures.block_bytes.value, params.figures.repeat_bytes.value) == (32, 256)
    assert params.figures.max_repeat.value == 255


def test_generated_header_gives_the_engine_the_files_figures(tmp_path: Path) -> None:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not installed")
    soc.write_params_header(tmp_path / "jk_soc_params.h")
    (tmp_path / "probe.cpp").write_text(
        '#include <cstdio>\n#include "jk_soc_params.h"\n'
        "int main() {\n"
        "  jk::SocParams p = jk_soc::params();\n"
        '  std::printf("%s %u %u %.2f %u %.2f\\n", p.name, p.ub_bytes, p.vector_cores,\n'
        "              p.mte2_bytes_per_cycle, p.mte3_latency, p.clock_mhz);\n"
        '  const char* ops[] = {"Add", "Div", "NoSuchOp"};\n'
        "  for (const char* op : ops) for (unsigned b : {4u, 2u, 8u}) {\n"
        "    jk::VectorCost c = p.vector_cost(op, b);\n"
        '    std::printf("%s %u %u %u\\n", op, b, c.startup, c.per_repeat);\n'
        "  }\n"
        "  fe::PlatFormInfos f = jk_soc::platform();\n"
        '  std::printf("%u %u\\n", f.core_num_aiv, f.core_num_aic);\n'
        "}\n"
    )
    argv = [gxx, "-std=c++17", "-O0", f"-I{LIBRARY / 'include'}", f"-I{tmp_path}", "probe.cpp"]
    subprocess.run([*argv, "-o", "probe"], cwd=tmp_path, check=True)
    out = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    f = soc.load_soc().figures
    assert lines[0] == (
        f"ascend910b {f.ub_bytes.value} {f.vector_cores.value} "
        f"{f.mte2_bytes_per_cycle.value:.2f} {f.mte3_latency.value} {f.clock_mhz.value:.2f}"
    )
    params = soc.load_soc()
    expected = []
    for op in ("Add", "Div", "NoSuchOp"):
        for nbytes, dtype in ((4, "float32"), (2, "float16"), (8, "float32")):
            c = params.cost(op if op in soc.VECTOR_OPS else "default", dtype)
            expected.append(f"{op} {nbytes} {c.startup} {c.per_repeat}")
    assert lines[1:10] == expected
    assert lines[10] == f"{f.vector_cores.value} {f.cube_cores.value}"


def _drop_line(pattern: str) -> Callable[[str], str]:
    return lambda text: re.sub(rf"(?m)^{pattern}.*\n", "", text, count=1)


def _sub(old: str, new: str) -> Callable[[str], str]:
    return lambda text: re.sub(old, new, text, count=1)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda t: t + "figures = [\n", "invalid TOML"),
        (_drop_line("mte2_latency"), "figures.mte2_latency: Field required"),
        (
            _sub(r'(ub_bytes = \{ value = 196608, source = )"[^"]*"', r'\1""'),
            "figures.ub_bytes.source",
        ),
        (
            lambda t: t.replace(
                "[figures]\n", '[figures]\nub_byts = { value = 1, source = "assumption: x" }\n'
            ),
            "figures.ub_byts: Extra inputs",
        ),
        (
            lambda t: t.replace("\nExp = ", "\nExpo = ", 2).replace("\nExpo = ", "\nExp = ", 1),
            "vector.float16.Exp: Field required",
        ),
        (
            _sub(r"vector_cores = \{ value = 40", 'vector_cores = { value = "forty"'),
            "figures.vector_cores.value",
        ),
        (
            _sub(r"mte3_latency = \{ value = 120", "mte3_latency = { value = -1"),
            "figures.mte3_latency.value",
        ),
        (_sub(r'name = "ascend910b"', 'name = "other"'), "name: 'other' does not match"),
    ],
)
def test_a_broken_file_is_refused_naming_file_and_key(
    tmp_path: Path, edit: Callable[[str], str], key: str
) -> None:
    broken = tmp_path / "ascend910b.toml"
    text = DEFAULT.read_text()
    broken.write_text(edit(text))
    assert broken.read_text() != text
    with pytest.raises(soc.SocError) as err:
        soc.load_soc(path=broken)
    assert str(broken) in str(err.value) and key in str(err.value), str(err.value)


def test_fingerprint_follows_every_figure(tmp_path: Path) -> None:
    assert soc.soc_fingerprint() == soc.soc_fingerprint()
    changed = tmp_path / "ascend910b.toml"
    changed.write_text(
        DEFAULT.read_text().replace("flag_cycles = { value = 1,", "flag_cycles = { value = 2,")
    )
    assert soc.params_header(soc.load_soc(path=changed)) != soc.params_header(soc.load_soc())
    with pytest.raises(soc.SocError, match="bad SoC name"):
        soc.load_soc("../ascend910b")
    with pytest.raises(soc.SocError, match="no such SoC parameter file"):
        soc.load_soc("nonexistent")
