"""A secret written through the secrets store never shows up where it must not: the database
file, the logs, an export, or any API response."""

from __future__ import annotations

import asyncio
import zipfile
from pathlib import Path

import httpx

from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from justkernel.settings.secrets import SecretsStore
from tests.support.leaks import files_containing, zip_members_containing
from tests.support.server import export_run, running_server

SECRET = "sk-leakcheck-7Hq2ZpX9vK4mN8rT1wYb"


async def _populate(data: Path, config: Path) -> str:
    lab = await open_lab(Settings(data_dir=data, config_dir=config))
    try:
        lab.secrets.set("qwen_api_key", SECRET)
        key = lab.secrets.get("qwen_api_key")
        assert key is not None
        run = await lab.runs.create("leak check", meta={"model": "qwen"})
        # parts log and record things that are *about* the secret, never the secret itself
        await lab.events.append(run.id, "model.configured", {"model": "qwen", "key": f"{key}"})
        await lab.events.append(run.id, "note", {"text": repr(key)})
        return run.id
    finally:
        await lab.close()


def test_secret_is_absent_from_database_logs_export_and_api(tmp_path: Path) -> None:
    data, config = tmp_path / "data", tmp_path / "config"
    run_id = asyncio.run(_populate(data, config))
    token = "a" * 32
    bodies: list[str] = []
    with running_server(data, config, JUSTKERNEL_API_TOKEN=token) as srv:
        api = httpx.Client(base_url=srv.base_url, headers={"Authorization": f"Bearer {token}"})
        for path in (
            "/health",
            "/api/runs",
            f"/api/runs/{run_id}",
            f"/api/runs/{run_id}/events",
            "/",
            "/app.js",
        ):
            response = api.get(path)
            assert response.status_code == 200, path
            bodies.append(response.text + str(response.headers))
        with api.stream("GET", f"/api/runs/{run_id}/stream") as stream:
            for line in stream.iter_lines():
                bodies.append(line)
                if line.startswith("data:") and '"seq":2' in line:
                    break
        bodies.extend(srv.output)

    bundle = export_run(data, config, run_id, tmp_path / "run.jkb")

    secret = SECRET.encode()
    assert all(SECRET not in body for body in bodies)
    # the bundle is a deflated zip: each member's plaintext, not the file's bytes
    assert zipfile.is_zipfile(bundle)
    assert zip_members_containing(bundle, secret) == []
    assert files_containing(data, secret) == []  # database (+ WAL), logs, blobs
    # and the store itself still has it, encrypted
    assert SecretsStore(config).get("qwen_api_key").reveal() == SECRET  # type: ignore[union-attr]
    assert files_containing(config, secret) == []
