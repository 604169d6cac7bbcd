"""The file-kept state: a model file reads back what was saved and reads as defaults when it
is missing or broken; the secrets file is 0600, keeps only what the caller gave it, and names
a broken file instead of reading it as empty (which would let a save drop every secret)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from justkernel.store.files import SecretFile, SecretFileError
from justkernel.web.task_settings import TaskSettings, TaskStore


def test_the_task_file_reads_back_what_was_saved_and_defaults_when_broken(tmp_path: Path) -> None:
    store = TaskStore(tmp_path)
    assert store.load() == TaskSettings()  # nothing saved yet
    store.save(TaskSettings(name="tuned", minutes=30))
    assert store.path == tmp_path / "dashboard" / "task.json"
    assert TaskStore(tmp_path).load() == TaskSettings(name="tuned", minutes=30)
    assert not store.path.with_name("task.json.tmp").exists()
    store.path.write_text('{"name": ', encoding="utf-8")
    assert store.load() == TaskSettings()


def test_the_secrets_file_is_private_and_a_broken_one_is_named(tmp_path: Path) -> None:
    secrets = SecretFile(tmp_path / "secrets.json")
    assert secrets.load() == {}
    secrets.save({"b": "token-b", "a": "token-a"})
    assert stat.S_IMODE(secrets.path.stat().st_mode) == 0o600
    assert secrets.load() == {"a": "token-a", "b": "token-b"}
    secrets.path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SecretFileError, match="expected an object"):
        secrets.load()
    secrets.path.write_text("{", encoding="utf-8")
    with pytest.raises(SecretFileError, match="not valid JSON"):
        secrets.load()
