"""Fixtures for team tests: a real lab runtime (store, evaluator on the local pool, sandbox,
checkpointer) in folders the sandbox user can traverse."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from justkernel.runtime import LabRuntime, open_runtime
from justkernel.settings.config import Settings
from justkernel.settings.models import ModelPreset


def open_folder(prefix: str) -> Path:
    """A folder under /tmp with mode 0755: the sandbox uid must reach job and pack folders
    (pytest's tmp_path sits under a 0700 folder)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="session")
def shared_lab_dir() -> Iterator[Path]:
    """One lab data folder for the heavy team tests of a session: like a real lab, later runs
    reuse the receipt cache and input packs of earlier ones."""
    folder = open_folder("jk-lab-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def lab_settings(shared_lab_dir: Path, tmp_path: Path) -> Settings:
    return Settings(data_dir=shared_lab_dir / "data", config_dir=tmp_path / "config")


@pytest.fixture
async def runtime(lab_settings: Settings) -> AsyncIterator[LabRuntime]:
    async with open_runtime(lab_settings, slots=2) as opened:
        yield opened


def scripted_preset(base_url: str, **extra: object) -> ModelPreset:
    return ModelPreset(
        name="scripted",
        provider="openai_compatible",
        model="scripted-model",
        display_name="Scripted",
        base_url=base_url,
        api_key_secret="scripted_key",
        **extra,  # type: ignore[arg-type]
    )
