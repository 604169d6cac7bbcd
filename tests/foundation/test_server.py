"""The real server over real HTTP: auth, API, SSE resume, bind safety, supervisor restarts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from tests.support.server import running_server, server_env, wait_for_link


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "data", tmp_path / "config"


async def _seed(data_dir: Path, config_dir: Path, count: int) -> str:
    lab = await open_lab(Settings(data_dir=data_dir, config_dir=config_dir))
    try:
        run = await lab.runs.create("seeded")
        for i in range(count):
            await lab.events.append(run.id, "test.tick", {"i": i}, team="Offline-001")
        return run.id
    finally:
        await lab.close()


async def _append(data_dir: Path, config_dir: Path, run_id: str, start: int, count: int) -> None:
    lab = await open_lab(Settings(data_dir=data_dir, config_dir=config_dir))
    try:
        for i in range(start, start + count):
            await lab.events.append(run_id, "test.tick", {"i": i})
    finally:
        await lab.close()


def test_api_needs_the_token_and_the_token_works_once(dirs: tuple[Path, Path]) -> None:
    data, config = dirs
    with running_server(data, config) as srv:
        assert srv.base_url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{srv.base_url}/health").status_code == 200
        assert httpx.get(f"{srv.base_url}/api/runs").status_code == 401
        assert httpx.get(f"{srv.base_url}/").status_code == 401
        with httpx.Client(base_url=srv.base_url) as browser:
            first = browser.get(f"/auth/bootstrap?token={srv.token}")
            assert first.status_code == 303
            port = srv.base_url.rsplit(":", 1)[1]
            assert f"jk_session_{port}" in browser.cookies  # named for its port
            assert browser.get("/api/runs").json() == {"runs": []}
            assert "JustKernel" in browser.get("/").text
        # the one-time token cannot be replayed by someone else
        again = httpx.get(f"{srv.base_url}/auth/bootstrap?token={srv.token}")
        assert again.status_code == 401
        assert httpx.get(f"{srv.base_url}/auth/bootstrap?token=wrong").status_code == 401
        forged = httpx.get(f"{srv.base_url}/api/runs", cookies={f"jk_session_{port}": "00.abc"})
        assert forged.status_code == 401


def test_bearer_token_and_api_errors(dirs: tuple[Path, Path]) -> None:
    data, config = dirs
    run_id = asyncio.run(_seed(data, config, 30))
    token = "t" * 32
    with running_server(data, config, JUSTKERNEL_API_TOKEN=token) as srv:
        api = httpx.Client(base_url=srv.base_url, headers={"Authorization": f"Bearer {token}"})
        runs = api.get("/api/runs").json()["runs"]
        assert [r["id"] for r in runs] == [run_id]
        page = api.get(f"/api/runs/{run_id}/events", params={"after": 10, "limit": 5}).json()
        assert [e["seq"] for e in page["events"]] == [11, 12, 13, 14, 15]
        newest = api.get(f"/api/runs/{run_id}/events", params={"order": "desc", "limit": 2})
        assert [e["seq"] for e in newest.json()["events"]] == [30, 29]
        bad = api.get(f"/api/runs/{run_id}/events", params={"limit": "many"})
        assert bad.status_code == 400 and "limit" in bad.json()["detail"]
        assert api.get("/api/runs/nope/events").status_code == 404
        wrong = httpx.get(f"{srv.base_url}/api/runs", headers={"Authorization": "Bearer x"})
        assert wrong.status_code == 401


def _read_sse(base: str, run_id: str, token: str, want: int, last_id: str | None) -> list[dict]:
    headers = {"Authorization": f"Bearer {token}"}
    if last_id is not None:
        headers["Last-Event-ID"] = last_id
    got: list[dict] = []
    with httpx.stream(
        "GET", f"{base}/api/runs/{run_id}/stream", headers=headers, timeout=30
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                got.append(json.loads(line[6:]))
                if len(got) == want:
                    break
    return got


def test_sse_streams_live_events_and_resumes_from_last_event_id(dirs: tuple[Path, Path]) -> None:
    data, config = dirs
    run_id = asyncio.run(_seed(data, config, 20))
    token = "s" * 32
    with running_server(data, config, JUSTKERNEL_API_TOKEN=token) as srv:
        first = _read_sse(srv.base_url, run_id, token, 20, None)
        assert [e["seq"] for e in first] == list(range(1, 21))
        # events written by another process while nobody listens are picked up on resume
        writer = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import asyncio, sys; from pathlib import Path;"
                "from tests.foundation.test_server import _append;"
                "asyncio.run(_append(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], 20, 15))",
                str(data),
                str(config),
                run_id,
            ],
            cwd=Path(__file__).resolve().parents[2],
        )
        resumed = _read_sse(srv.base_url, run_id, token, 15, last_id="20")
        assert writer.wait(timeout=60) == 0
        assert [e["seq"] for e in resumed] == list(range(21, 36))
        assert [e["payload"]["i"] for e in resumed] == list(range(20, 35))


def test_refuses_to_bind_off_loopback_without_flag_and_token(dirs: tuple[Path, Path]) -> None:
    data, config = dirs
    base = [sys.executable, "-m", "justkernel.cli.main", "serve", "--port", "0"]
    no_flag = subprocess.run(
        [*base, "--host", "0.0.0.0"], env=server_env(data, config), capture_output=True, text=True
    )
    assert no_flag.returncode == 2
    assert "--allow-remote" in no_flag.stderr
    weak = subprocess.run(
        [*base, "--host", "0.0.0.0", "--allow-remote"],
        env=server_env(data, config, JUSTKERNEL_API_TOKEN="short"),
        capture_output=True,
        text=True,
    )
    assert weak.returncode == 2
    assert "JUSTKERNEL_API_TOKEN" in weak.stderr


def test_invalid_settings_fail_at_start_naming_the_key(dirs: tuple[Path, Path]) -> None:
    data, config = dirs
    result = subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "serve"],
        env=server_env(data, config, JUSTKERNEL_PORT="not-a-port"),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "JUSTKERNEL_PORT" in result.stderr
    assert "Traceback" not in result.stderr


def test_supervisor_restarts_a_crashed_server(dirs: tuple[Path, Path]) -> None:
    data, config = dirs
    with running_server(data, config, "--supervise") as srv:
        session = httpx.Client(base_url=srv.base_url)
        assert session.get(f"/auth/bootstrap?token={srv.token}").status_code == 303
        assert session.get("/api/runs").status_code == 200
        child_pid = _child_pid(srv.process.pid)
        os.kill(child_pid, signal.SIGKILL)
        restarted = wait_for_link(srv.process, srv.output)
        assert restarted == srv.link  # same port, same link
        assert any("killed by SIGKILL" in line for line in srv.output)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                response = session.get("/api/runs")
                break
            except httpx.TransportError:
                time.sleep(0.2)
        # the session cookie survives the restart; the used token stays used
        assert response.status_code == 200
        assert httpx.get(srv.link).status_code == 401


def _child_pid(parent: int) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        out = subprocess.run(
            ["pgrep", "-P", str(parent)], capture_output=True, text=True
        ).stdout.split()
        if out:
            return int(out[0])
        time.sleep(0.1)
    raise AssertionError("no child process")
