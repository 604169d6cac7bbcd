"""PostgreSQL of any installed version runs the store tests; none is a named failure.

Finding: the suite looked for PostgreSQL only in /usr/lib/postgresql/15/bin, so on a machine with
another major version (16 on Debian 13, say) all 22 PostgreSQL tests skipped silently. Now the
binaries are found on PATH or under /usr/lib/postgresql/<major>/bin, newest first. Here the
machine's real server binaries are linked into a folder named for another version, and a real
server is started from it.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from justkernel.capabilities import POSTGRES_TOOLS, postgres_bin_dir, postgres_capability
from tests.support.labs import open_folder
from tests.support.postgres import create_database, postgres_server

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def _installed() -> Path:
    found = postgres_bin_dir()
    assert found is not None, "PostgreSQL is not installed (apt-get install postgresql)"
    return found


def _link_version(root: Path, major: str, tools: tuple[str, ...]) -> Path:
    """<root>/<major>/bin holding links to the installed server's `tools` (mode 0755: as root
    the server runs as the postgres user, who must reach them)."""
    folder = root / major / "bin"
    folder.mkdir(parents=True, mode=0o755)
    for part in (root, root / major):
        part.chmod(0o755)
    for tool in tools:
        (folder / tool).symlink_to(_installed() / tool)
    return folder


async def _server_version(url: str) -> str:
    connection = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
    try:
        return str(await connection.fetchval("SHOW server_version"))
    finally:
        await connection.close()


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    folder = open_folder("jk-pg-versions-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_another_major_version_is_found_and_serves(
    shared_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", SYSTEM_PATH)  # no initdb on PATH: the Debian layout decides
    root = shared_tmp / "postgresql"
    _link_version(root, "9", ("initdb",))  # an incomplete old install is passed over
    newest = _link_version(root, "99", (*POSTGRES_TOOLS, "postgres"))
    _link_version(root, "12", (*POSTGRES_TOOLS, "postgres"))
    cap = postgres_capability(root)
    assert cap.present, cap.detail
    assert cap.detail.startswith(f"{newest}:")
    with postgres_server(bin_dir=newest) as url:
        create_database(url, "jk_any_version", bin_dir=newest)
        assert asyncio.run(_server_version(f"{url}/jk_any_version"))


def test_binaries_on_path_win(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _link_version(tmp_path / "custom", "x", (*POSTGRES_TOOLS, "postgres"))
    monkeypatch.setenv("PATH", f"{folder}:{SYSTEM_PATH}")
    assert postgres_bin_dir(tmp_path / "no-debian-layout") == folder


def test_no_postgres_is_a_named_missing_capability(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    cap = postgres_capability(tmp_path / "nothing")
    assert not cap.present
    assert "initdb" in cap.detail and cap.fix == "apt-get install postgresql"
    assert shutil.which("initdb", path=str(tmp_path)) is None
