"""Issue 15 points 2 and 3: pauses are per connection (a model preset: its URL and key), and
a paused connection can be resumed after its key is fixed, whether or not a scheduler drives
the run, through the real CLI and the OpenAI-compatible stand-in."""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
from typing import Any

from justkernel.app import LabRuntime
from justkernel.governance.limits import ModelCallLimiter
from justkernel.scheduler.scheduler import SchedulerConfig
from justkernel.settings.config import Settings
from justkernel.settings.models import (
    ModelPreset,
    load_model_presets,
    preset_secret_name,
    save_local_preset,
)
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, Reply, ToolCall

KEY_A = f"sk-conn-a-{secrets.token_hex(8)}"
KEY_B = f"sk-conn-b-{secrets.token_hex(8)}"
WRONG = f"sk-wrong-{secrets.token_hex(8)}"
CPU = {"toolchain": "cpu"}  # the C port: no one-time toolchain build in a CLI run


def _preset(runtime: LabRuntime, settings: Settings, name: str, base_url: str, key: str) -> None:
    """A local preset of type openai_compatible with its own stored key, as the dashboard
    saves it (the CLI, another process, reads the same files)."""
    save_local_preset(
        settings.models_local_file,
        ModelPreset(name=name, provider="openai_compatible", model="m", base_url=base_url),
    )
    runtime.lab.secrets.set(preset_secret_name(name), key)
    runtime.presets[name] = load_model_presets(settings.models_local_file)[name]


def _reads_then_done(body: dict[str, Any]) -> Reply:
    """One tool call (slowly: the other connection's 401 comes first), then `[done]`."""
    if any(m["role"] == "tool" for m in body["messages"]):
        return Reply(text="[done]")
    return Reply(
        tool_calls=[ToolCall("read_file", {"file_path": "/spec.md", "limit": 3})], delay_s=1.0
    )


async def _run_cli(settings: Settings, *args: str) -> tuple[int, str]:
    """`justkernel run ARGS` in a process of its own, as a user in another terminal runs it
    (its signal handlers need the main thread of a process)."""
    env = {**os.environ, "JUSTKERNEL_DATA_DIR": str(settings.data_dir)}
    env["JUSTKERNEL_CONFIG_DIR"] = str(settings.config_dir)
    env["JUSTKERNEL_MODELS_LOCAL_FILE"] = str(settings.models_local_file)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "justkernel.cli.main",
        "run",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    return process.returncode or 0, output.decode()


async def test_two_connections_of_one_type_pause_apart(
    runtime: LabRuntime, lab_settings: Settings
) -> None:
    async with (
        OpenAIServer(_reads_then_done, api_key=KEY_A) as server_a,
        OpenAIServer(_reads_then_done, api_key=KEY_B) as server_b,
    ):
        _preset(runtime, lab_settings, "conn_a", server_a.base_url, WRONG)
        _preset(runtime, lab_settings, "conn_b", server_b.base_url, KEY_B)
        run = await runtime.lab.runs.create("two connections, one bad key")
        scheduler = runtime.scheduler(run.id, SchedulerConfig())
        team_a = await scheduler.add_team("conn_a")
        team_b = await scheduler.add_team("conn_b")
        await scheduler.run(seconds=60)
        answered_b = [r for r in server_b.requests if r.status == 200]

    stored_a = await runtime.lab.teams.get(run.id, team_a.id)
    stored_b = await runtime.lab.teams.get(run.id, team_b.id)
    assert stored_a.status == "paused"
    assert (stored_a.status_reason or "").startswith("provider conn_a paused:")
    assert stored_b.status == "done", stored_b.status_reason  # the good key kept working
    assert len(answered_b) == 2
    (paused,) = await runtime.lab.events.read(run.id, kinds=["provider.paused"])
    assert paused.payload["connection"] == "conn_a"
    assert paused.payload["provider"] == "openai_compatible"


async def test_the_per_provider_cap_is_shared_by_the_connections_of_a_type() -> None:
    limiter = ModelCallLimiter(4, {"openai_compatible": 1})
    async with limiter.slot("openai_compatible", "conn_a"):
        other = asyncio.ensure_future(limiter.slot("openai_compatible", "conn_b").__aenter__())
        await asyncio.sleep(0.05)
        assert not other.done()  # conn_b waits for the type's one slot
    await other
    assert limiter.peak == 1


async def test_a_paused_connection_is_resumed_from_the_cli_with_no_scheduler_running(
    runtime: LabRuntime, lab_settings: Settings
) -> None:
    async with OpenAIServer(lambda body: Reply(text="[done]"), api_key=KEY_A) as server:
        _preset(runtime, lab_settings, "conn_cli", server.base_url, WRONG)
        run = await runtime.lab.runs.create("bad key, fixed from the CLI", meta=CPU)
        team = await runtime.scheduler(run.id, SchedulerConfig()).add_team("conn_cli")
        # `justkernel run` ends with its only team paused: it says why and how, and fails
        args = ("--resume", run.id, "--no-judger", "--minutes", "1")
        code, said = await _run_cli(lab_settings, *args)
        assert code == 1, said
        assert f"justkernel resume-provider {run.id} conn_cli" in said, said
        assert (await runtime.lab.teams.get(run.id, team.id)).status == "paused"

        # the key is still wrong: the connection test refuses the resume, nothing changes
        # (resume-provider in this process: no scheduler runs here either, and it costs no
        # fresh interpreter)
        resume = ("resume-provider", run.id, "conn_cli")
        refused = await asyncio.to_thread(run_cli, lab_settings, *resume)
        assert refused.exit_code == 2, refused.output
        assert "connection test failed" in refused.output and WRONG not in refused.output
        assert (await runtime.lab.teams.get(run.id, team.id)).status == "paused"

        runtime.lab.secrets.set(preset_secret_name("conn_cli"), KEY_A)  # the person fixes it
        resumed_cli = await asyncio.to_thread(run_cli, lab_settings, *resume)
        assert resumed_cli.exit_code == 0, resumed_cli.output
        assert f"run --resume {run.id}" in resumed_cli.output
        # no scheduler drove the run: the store holds the resume, no request waits
        assert (await runtime.lab.teams.get(run.id, team.id)).status == "idle"
        (resumed,) = await runtime.lab.events.read(run.id, kinds=["provider.resumed"])
        assert resumed.payload["connection"] == "conn_cli"
        assert resumed.payload["teams"] == [team.id]

        # the next drive dispatches the team: its turn reaches the stand-in with the right key
        before = len(server.chat_bodies)
        await runtime.scheduler(run.id, SchedulerConfig()).run(seconds=60)
        assert len(server.chat_bodies) == before + 1
    assert (await runtime.lab.teams.get(run.id, team.id)).status == "done"
