"""State kept as one small file in the data or config folder, written so a crash leaves the
old file or the new one, never half of either: a pydantic model as JSON (the dashboard's task),
and the secrets' encrypted values and key (mode 0600 from the first byte, synced to disk).

What the values mean (a form's rules, the encryption) stays with their owners; this is only
where and how the bytes are kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def write_private(path: Path, data: bytes) -> None:
    """Write a file readable only by its owner, replacing it atomically."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, 0o600)
    tmp.replace(path)


class JsonModelFile(Generic[M]):
    """One pydantic model in one JSON file; a missing or unreadable file reads as the
    model's defaults (a reload shows what was saved, or a fresh form)."""

    def __init__(self, path: Path, model: type[M]) -> None:
        self.path = path
        self._model = model

    def load(self) -> M:
        try:
            return self._model.model_validate_json(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return self._model()

    def save(self, value: M) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(value.model_dump(mode="json"), indent=1), encoding="utf-8")
        os.replace(tmp, self.path)


class SecretFileError(ValueError):
    """The secrets file exists but is not a JSON object of name → token."""


class SecretFile:
    """Names → encrypted tokens (already encrypted by the caller) in one 0600 JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, str]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SecretFileError(f"{self.path}: not valid JSON") from exc
        if not isinstance(data, dict):
            raise SecretFileError(f"{self.path}: expected an object of name → token")
        return data

    def save(self, data: dict[str, str]) -> None:
        write_private(self.path, json.dumps(data, indent=1, sort_keys=True).encode())
