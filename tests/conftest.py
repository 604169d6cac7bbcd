"""Shared fixtures: real SQLite and PostgreSQL databases, isolated settings and secrets; and
the rule that a skip fails a full run (tests/support/skips.py)."""

from __future__ import annotations

import secrets
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from langchain_openai.chat_models import _client_utils

from justkernel.app import LabRuntime, open_runtime
from justkernel.lab import Lab, open_lab
from justkernel.settings.config import Settings
from tests.support.labs import open_folder
from tests.support.postgres import (
    create_database,
    postgres_server,
    postgres_unavailable_reason,
)

pytest_plugins = ("tests.support.skips",)


@pytest.fixture(scope="session", autouse=True)
def session_cache_home() -> Iterator[Path]:
    """One XDG cache folder for the whole session: the toolchains' trusted artefacts
    (`<cache_dir>/toolchains/<id>/`: the ascendc-cpu harness main ~11 CPU-s, its precompiled
    headers, the cpu harness.o) are built once per session, as once per machine in a real lab,
    not once per test. Set for the session too (with the target pin below), so a server a
    session fixture starts sees the same environment as the tests."""
    folder = open_folder("jk-cache-")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder))
        patch.setenv("JUSTKERNEL_TOOLCHAIN", "cpu")
        yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session_cache_home: Path
) -> None:
    """No test reads the developer's .env, config folder, cache or data folder.

    The lab's default target is `ascendc-cpu`, but the suite pins `JUSTKERNEL_TOOLCHAIN=cpu`:
    the existing tests were written for the C port and stay on it (fast, and it is the second
    target the lab keeps working); a test of an Ascend C flow sets the toolchain explicitly,
    and a test of the default itself deletes the variable."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache_home))
    monkeypatch.setenv("JUSTKERNEL_TOOLCHAIN", "cpu")
    for name in (
        "JUSTKERNEL_DATA_DIR",
        "JUSTKERNEL_DATABASE_URL",
        "JUSTKERNEL_API_TOKEN",
        "JUSTKERNEL_CACHE_DIR",
        "JUSTKERNEL_PROVIDER_KEYS",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _fresh_provider_connections() -> Iterator[None]:
    """langchain-openai shares one httpx client per (base URL, timeout) across the process.
    A lab runs one event loop, so that is right there; but tests each run their own loop, and
    when a model stand-in gets a port an earlier test's stand-in had, the cached client's
    connections belong to a closed loop ("Event loop is closed"). Each test starts afresh."""
    yield
    _client_utils._cached_async_httpx_client.cache_clear()
    _client_utils._cached_sync_httpx_client.cache_clear()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", config_dir=tmp_path / "config")


@pytest.fixture(scope="session")
def postgres_base_url() -> Iterator[str]:
    reason = postgres_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with postgres_server() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_base_url: str) -> str:
    """A fresh, empty database on the session's PostgreSQL server."""
    name = f"jk_{secrets.token_hex(4)}"
    create_database(postgres_base_url, name)
    return f"{postgres_base_url}/{name}"


@pytest.fixture(params=["sqlite", "postgres"])
async def lab(request: pytest.FixtureRequest, settings: Settings) -> AsyncIterator[Lab]:
    """A migrated lab on a real SQLite file, and again on a real PostgreSQL database."""
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_url")
        settings = settings.model_copy(update={"database_url": url})
    opened = await open_lab(settings)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture(scope="session")
def shared_lab_dir() -> Iterator[Path]:
    """One lab data folder for the heavy tests of a session: like a real lab, later runs
    reuse the receipt cache and input packs of earlier ones."""
    folder = open_folder("jk-lab-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def lab_settings(shared_lab_dir: Path, tmp_path: Path) -> Settings:
    return Settings(data_dir=shared_lab_dir / "data", config_dir=tmp_path / "config")


@pytest.fixture
async def runtime(lab_settings: Settings) -> AsyncIterator[LabRuntime]:
    """A real lab runtime: store, evaluator on two local slots, sandbox, checkpointer."""
    async with open_runtime(lab_settings, slots=2) as opened:
        yield opened
