"""The lab's default target and its trusted-artefact cache come from settings: `ascendc-cpu`
unless `JUSTKERNEL_TOOLCHAIN` says otherwise, a bad value names the variable and the choices,
and the toolchains' artefacts live under the per-user cache, not in a data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from justkernel.settings.config import ConfigError, load_settings


def test_the_default_target_is_ascendc_cpu_and_a_bad_one_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("JUSTKERNEL_TOOLCHAIN")  # the suite pins cpu (tests/conftest.py)
    assert load_settings().toolchain == "ascendc-cpu"
    monkeypatch.setenv("JUSTKERNEL_TOOLCHAIN", "cpu")
    assert load_settings().toolchain == "cpu"
    monkeypatch.setenv("JUSTKERNEL_TOOLCHAIN", "gpu")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert "JUSTKERNEL_TOOLCHAIN" in message
    assert "'ascendc-cpu'" in message and "'cpu'" in message and "'cann'" in message


def test_toolchain_artefacts_live_in_the_user_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    settings = load_settings(data_dir=tmp_path / "one-lab")
    assert settings.toolchains_dir == (tmp_path / "xdg-cache" / "justkernel" / "toolchains")
    assert load_settings(data_dir=tmp_path / "other-lab").toolchains_dir == settings.toolchains_dir
    monkeypatch.setenv("JUSTKERNEL_CACHE_DIR", "")  # as .env.example shows it: the default
    assert load_settings().toolchains_dir == settings.toolchains_dir
    monkeypatch.setenv("JUSTKERNEL_CACHE_DIR", str(tmp_path / "mine"))
    assert load_settings().toolchains_dir == tmp_path / "mine" / "toolchains"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("JUSTKERNEL_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert load_settings().cache_dir == tmp_path / "home" / ".cache" / "justkernel"
