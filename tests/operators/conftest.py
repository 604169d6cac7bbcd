"""Session fixtures for the operator tests: one cached input pack, one build per kernel variant.

Generating the 15 local cases and compiling take a few seconds, so both happen once per session.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from justkernel.operators import (
    InputPack,
    OperatorDefinition,
    build_project,
    ensure_input_pack,
    load_operator,
    local_cases,
)

FIXTURE_KERNELS = Path(__file__).resolve().parent.parent / "fixtures" / "kernels"


@pytest.fixture(scope="session")
def definition() -> OperatorDefinition:
    return load_operator("confusion_mul_grad")


@pytest.fixture(scope="session")
def pack_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("packs")


@pytest.fixture(scope="session")
def local_pack(definition: OperatorDefinition, pack_cache: Path) -> InputPack:
    return ensure_input_pack(local_cases(definition), pack_cache, definition)


def make_project(definition: OperatorDefinition, variant: str | None, dest: Path) -> Path:
    """A copy of the template with a fixture variant's files laid over it (None: baseline)."""
    shutil.copytree(definition.project_dir, dest, ignore=shutil.ignore_patterns("build"))
    if variant is not None:
        shutil.copytree(FIXTURE_KERNELS / variant, dest, dirs_exist_ok=True)
    return dest


@pytest.fixture(scope="session")
def variant_harness(
    definition: OperatorDefinition, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str | None], Path]:
    """Build a kernel variant once per session and return its harness executable."""
    built: dict[str | None, Path] = {}

    def build(variant: str | None) -> Path:
        if variant not in built:
            root = tmp_path_factory.mktemp(f"variant-{variant or 'baseline'}")
            project = make_project(definition, variant, root / "project")
            result = build_project(project, root / "build", definition)
            assert result.ok, f"{variant}: {result.failed_step}\n{result.log}\n{result.problems}"
            built[variant] = result.harness
        return built[variant]

    return build
