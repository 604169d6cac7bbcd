"""Lab folders and presets for tests that run real evaluations."""

from __future__ import annotations

import tempfile
from pathlib import Path

from justkernel.settings.models import ModelPreset


def open_folder(prefix: str) -> Path:
    """A folder under /tmp with mode 0755: the sandbox uid must reach job and pack folders
    (pytest's tmp_path sits under a 0700 folder)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    return folder


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
