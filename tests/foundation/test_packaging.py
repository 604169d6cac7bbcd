"""The wheel carries what the app needs: installed into a clean venv, the CLI and server work."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.support.server import server_env, wait_for_link

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")  # `uv run` names itself in $UV
    if found is None:
        pytest.skip("uv not on PATH (python3 -m pip install uv)")
    return found


@pytest.fixture(scope="module")
def wheel(uv: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("justkernel-*.whl")
    return built


def test_wheel_carries_resources_and_migrations(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "justkernel/resources/models.toml" in names
    assert "justkernel/resources/web/index.html" in names
    assert "justkernel/store/migrations/env.py" in names
    assert any(n.startswith("justkernel/store/migrations/versions/0001") for n in names)
    resource_files = {
        p.relative_to(ROOT / "resources").as_posix()
        for p in (ROOT / "resources").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    missing = {f for f in resource_files if f"justkernel/resources/{f}" not in names}
    assert not missing


def test_installed_wheel_runs_help_and_serve(uv: str, wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [uv, "venv", "--python", sys.executable, str(venv)], check=True, capture_output=True
    )
    subprocess.run(
        [uv, "pip", "install", "--python", str(venv / "bin" / "python"), str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    exe = venv / "bin" / "justkernel"
    env = server_env(tmp_path / "data", tmp_path / "config")
    env.pop("PYTHONPATH", None)
    helped = subprocess.run(
        [str(exe), "--help"], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert helped.returncode == 0 and "serve" in helped.stdout
    server = subprocess.Popen(
        [str(exe), "serve", "--port", "0"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output: list[str] = []
        link = wait_for_link(server, output)
        base = link.split("/auth/")[0]
        with httpx.Client(base_url=base) as browser:
            assert browser.get("/api/runs").status_code == 401
            assert browser.get(link.replace(base, "")).status_code == 303
            assert browser.get("/api/runs").json() == {"runs": []}
            assert "JustKernel" in browser.get("/").text
    finally:
        server.terminate()
        server.wait(timeout=20)
