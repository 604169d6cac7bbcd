"""The operator definition loads, validates, and names file and key when it is wrong."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from justkernel.operators import (
    OperatorDefinition,
    OperatorDefinitionError,
    available_operators,
    load_case_file,
    load_definition,
)


def test_bundled_definition(definition: OperatorDefinition) -> None:
    assert "confusion_mul_grad" in available_operators()
    assert definition.operator.inputs == ("input0", "input1", "input2")
    assert definition.operator.outputs == ("output0", "output1")
    assert definition.spec_path.is_file()
    assert (definition.project_dir / "include" / "cmg_abi.h").is_file()
    assert definition.build.cflags == (
        "-O2",
        "-std=c11",
        "-fno-tree-loop-distribute-patterns",
        "-ffp-contract=off",
    )
    f32, f16 = definition.precision_for("float32"), definition.precision_for("float16")
    assert (f32.rtol, f32.atol, f32.error_ratio) == (1e-4, 1e-4, 1e-4)
    assert (f16.rtol, f16.atol, f16.error_ratio) == (1e-3, 1e-3, 1e-3)
    assert definition.harness.exit_codes.guard_violation == 86


def test_path_policy(definition: OperatorDefinition) -> None:
    access = definition.paths.access
    assert access("op_kernel/cmg_kernel.c") == "editable"
    assert access("op_host/cmg_tiling.c") == "editable"
    assert access("op_kernel/sub/helpers.h") == "editable"
    assert access("harness/harness.c") == "forbidden"
    assert access("include/cmg_abi.h") == "forbidden"
    assert access("Makefile") == "forbidden"
    assert access("../op_kernel/cmg_kernel.c") == "forbidden"
    assert access("/etc/passwd") == "forbidden"
    assert access("README.md") == "read_only"


def test_makefile_uses_the_declared_flags(definition: OperatorDefinition) -> None:
    makefile = (definition.project_dir / "Makefile").read_text()
    cflags = next(line for line in makefile.splitlines() if line.startswith("CFLAGS :="))
    assert tuple(cflags.split(":=", 1)[1].split()) == definition.build.cflags
    for symbol in definition.build.allowed_external_symbols:
        assert symbol in makefile


def _copy_definition(definition: OperatorDefinition, dest: Path) -> Path:
    shutil.copytree(definition.root, dest)
    return dest / "operator.toml"


def test_bad_value_names_file_and_key(definition: OperatorDefinition, tmp_path: Path) -> None:
    path = _copy_definition(definition, tmp_path / "op")
    path.write_text(path.read_text().replace("rtol = 1e-4", 'rtol = "tight"', 1))
    with pytest.raises(OperatorDefinitionError) as info:
        load_definition(path)
    assert str(path) in str(info.value)
    assert "precision.float32.rtol" in str(info.value)


def test_missing_precision_and_unknown_key(definition: OperatorDefinition, tmp_path: Path) -> None:
    path = _copy_definition(definition, tmp_path / "op")
    text = path.read_text().replace("[precision.float16]", "[precision_unused]")
    path.write_text(text)
    with pytest.raises(OperatorDefinitionError, match="precision_unused"):
        load_definition(path)


def test_missing_file_is_named(definition: OperatorDefinition, tmp_path: Path) -> None:
    path = _copy_definition(definition, tmp_path / "op")
    (path.parent / "spec.md").unlink()
    with pytest.raises(OperatorDefinitionError, match=r"operator\.spec"):
        load_definition(path)


def test_bad_case_names_table_index_and_key(tmp_path: Path) -> None:
    path = tmp_path / "cases.toml"
    path.write_text(
        "[[local]]\n"
        'id = "ok_case"\ninput0 = [4]\ninput1 = [4]\ninput2 = [4]\ndtype = "float32"\n'
        'distribution = "symmetric"\nseed = 1\n'
        "[[local]]\n"
        'id = "bad_axes"\ninput0 = [4, 3]\ninput1 = [4, 3]\ninput2 = [4, 3]\n'
        'dtype = "float32"\naxes = [2]\ndistribution = "symmetric"\nseed = 2\n'
    )
    with pytest.raises(OperatorDefinitionError) as info:
        load_case_file(path)
    message = str(info.value)
    assert str(path) in message and "local[1]" in message and "out of range" in message


def test_case_shapes_must_broadcast(tmp_path: Path) -> None:
    path = tmp_path / "cases.toml"
    path.write_text(
        "[[local]]\n"
        'id = "mismatch"\ninput0 = [4, 3]\ninput1 = [4, 2]\ninput2 = [4, 2]\n'
        'dtype = "float16"\ndistribution = "positive"\nseed = 1\n'
    )
    with pytest.raises(OperatorDefinitionError, match=r"local\[0\].*do not broadcast"):
        load_case_file(path)


def test_for_toolchain_picks_the_project_each_target_builds(
    definition: OperatorDefinition,
) -> None:
    """`cpu` builds the C port; `ascendc-cpu` and `cann` build the msopgen project."""
    assert definition.for_toolchain("cpu") is definition
    for toolchain_id in ("ascendc-cpu", "cann"):
        view = definition.for_toolchain(toolchain_id)
        assert view.project_dir == definition.ascendc_target().project_dir
        assert view.project_dir.name == "ascendc"
        assert view.paths.access("op_kernel/confusion_mul_grad.cpp") == "editable"
    with pytest.raises(ValueError, match="unknown toolchain"):
        definition.for_toolchain("gpu")


def test_targets_contract() -> None:
    from justkernel.core.targets import DEFAULT_TOOLCHAIN, TOOLCHAIN_IDS, playbook_target

    assert DEFAULT_TOOLCHAIN == "ascendc-cpu"
    assert set(TOOLCHAIN_IDS) == {"ascendc-cpu", "cpu", "cann"}
    assert [playbook_target(t) for t in ("cpu", "ascendc-cpu", "cann")] == [
        "cpu",
        "ascendc",
        "ascendc",
    ]
