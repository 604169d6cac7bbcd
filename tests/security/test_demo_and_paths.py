"""Issue 11 finding 10 (web part): the demo server imported bundles and started a new run on
every click, and API answers showed host paths (the data folder in import errors, the hosts
file's absolute path in `/api/config/workers`).

Who is hostile: anyone who can reach the demo (it is the server people try first, often
exposed carelessly) and anyone reading API answers (a screenshot, a shared log): a host path
names the user, their folders and the lab's layout.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from justkernel.events.run_archive_check import check_bundle
from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from justkernel.web.demo import DemoPlayer, demo_bundle_path
from tests.security.web_lab import SignedIn, signed_in_lab
from tests.support.labs import open_folder
from tests.support.server import start_demo, wait_for_link


@dataclass
class Demo:
    base_url: str
    client: httpx.Client


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """The real `justkernel demo`, signed in with its one-time link."""
    home = tmp_path_factory.mktemp("demo-home")
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "xdg"),
        "PYTHONUNBUFFERED": "1",
    }
    process = start_demo(home, env, speed=1000)
    try:
        link = wait_for_link(process, [])
        base = link.split("/auth/bootstrap")[0]
        with httpx.Client(base_url=base, timeout=60) as client:
            assert client.get(link).status_code in (200, 303)
            yield Demo(base, client)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


def _run_ids(demo: Demo) -> list[str]:
    return [run["id"] for run in demo.client.get("/api/runs").json()["runs"]]


def test_the_demo_refuses_imports(demo: Demo) -> None:
    before = _run_ids(demo)
    answer = demo.client.post(
        "/api/import?name=mine",
        content=demo_bundle_path().read_bytes(),  # a valid bundle: it would have been imported
        headers={"Content-Type": "application/octet-stream"},
    )
    assert answer.status_code in (403, 405), answer.text
    assert "demo" in answer.json()["detail"]
    assert _run_ids(demo) == before  # no run added (the demo's own run keeps playing)


def test_the_demo_start_button_keeps_one_demo_run(demo: Demo) -> None:
    first = demo.client.post("/api/demo/start")
    assert first.status_code == 200, first.text
    for _ in range(3):
        again = demo.client.post("/api/demo/start")
        assert again.status_code == 200, again.text
        assert again.json()["run"]["id"] == first.json()["run"]["id"]
    runs = demo.client.get("/api/runs").json()["runs"]
    assert [r["mode"] for r in runs] == ["demo"]


@pytest.fixture(scope="module")
def lab() -> Iterator[SignedIn]:
    with signed_in_lab(open_folder("jk-sec-paths-")) as running:
        yield running


def _hidden(lab: SignedIn, text: str) -> None:
    for path in (lab.folder, lab.folder.resolve(), Path.cwd(), Path.home()):
        assert str(path) not in text, (str(path), text)


def test_api_answers_show_no_host_paths(lab: SignedIn) -> None:
    with lab.client() as api:
        workers = api.get("/api/config/workers")
        assert workers.status_code == 200
        assert workers.json()["hosts_file"] == "hosts.toml"
        _hidden(lab, workers.text)
        for body in (b"not a zip at all", b"PK\x03\x04broken", b""):
            refused = api.post(
                "/api/import", content=body, headers={"Content-Type": "application/octet-stream"}
            )
            assert refused.status_code == 400, refused.text
            assert refused.json()["detail"]
            _hidden(lab, refused.text)
        # a broken file of the lab's own: the answer says which file, not where it lives
        (lab.folder / "hosts.toml").write_text("[hosts.x\n")
        try:
            broken = api.get("/api/config/workers")
            assert broken.status_code == 500, broken.text
            assert "hosts.toml" in broken.json()["detail"]
            _hidden(lab, broken.text)
            start = api.post("/api/task/start", json={"name": "no hosts", "mode": "single"})
            assert start.status_code == 409, start.text
            assert "hosts.toml" in start.json()["detail"]
            _hidden(lab, start.text)
        finally:
            (lab.folder / "hosts.toml").unlink()


def test_a_restarted_demo_completes_its_run_instead_of_copying_it(settings: Settings) -> None:
    """A demo run an older server left part-filled (it played into the run at the recorded
    pace) is the run a new server opens: the events it lacks are added, none twice; a second
    Demo click gets the same run, and there is one demo run in the lab."""

    async def go() -> None:
        lab = await open_lab(settings)
        try:
            bundle = check_bundle(demo_bundle_path(), settings.export_max_bytes)
            meta = {"bundle_sha256": bundle.sha256, "simulated": True, "demo": True}
            old = await lab.runs.create("Demo — older server", mode="demo", meta=meta)
            await lab.events.insert_verbatim(old.id, bundle.events[:40])
            player = DemoPlayer(lab, speed=30)
            run = await player.start()
            assert run.id == old.id and run.last_seq == len(bundle.events)
            again = await DemoPlayer(lab).start()
            assert again.id == run.id and again.last_seq == run.last_seq
            played = [(e.seq, e.kind, e.team) async for e in lab.events.iter_all(run.id)]
            assert played == [(e.seq, e.kind, e.team) for e in bundle.events]
            assert [r.id for r in await lab.runs.list() if r.mode == "demo"] == [run.id]
        finally:
            await lab.close()

    asyncio.run(go())
