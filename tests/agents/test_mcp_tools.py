"""MCP tools for teams (issue #17, 5): a stdio MCP server written for the tests
(`tests/fixtures/mcp/docs_server.py`, the official `mcp` package) gives a team a tool it calls
through the real harness and scheduler, against the OpenAI-compatible stand-in; the server is
confined (scrubbed environment, the lab's folder, gone after the call), its result capped, and
a bad `mcp.toml` or a name clash is refused with a clear error."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from justkernel.agents.harness import build_team_agent, chat_model
from justkernel.agents.mcp import McpServerError, McpToolbox, offered_tools
from justkernel.agents.middleware import Governance
from justkernel.app import LabRuntime
from justkernel.governance.budget import BudgetCaps, BudgetGovernor
from justkernel.governance.limits import ModelCallLimiter
from justkernel.governance.watchdog import Watchdog, WatchdogLimits
from justkernel.settings.mcp import McpConfigError, mcp_file, parse_mcp
from justkernel.settings.models import ModelPreset
from justkernel.settings.secrets import SecretsStore
from tests.support.labs import scripted_preset
from tests.support.openai_server import Reply, ToolCall
from tests.support.scripted_run import scripted_run
from tests.support.team_context import team_context

KEY = "sk-mcp-tools-key-0017"
DOCS_TOKEN = "docs-token-value-4217"
LAB_SECRET = "lab-access-token-value-99"
SERVER = Path(__file__).parents[1] / "fixtures" / "mcp" / "docs_server.py"
OFFLINE = ModelPreset(name="offline", provider="offline", model="playbook")
ONLINE = ModelPreset(name="online", provider="openai_compatible", model="m")


def stdio_toml(tools: list[str], *, name: str = "docs", extra: str = "") -> str:
    return f"""
[servers.{name}]
transport = "stdio"
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(SERVER))}]
tools = {json.dumps(tools)}
teams = ["*"]
{extra}
"""


def _tool_messages(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def _docs_session(body: dict[str, Any]) -> Reply:
    """Search the docs, probe the server's process, read an over-long page, then stop."""
    steps = [
        ToolCall("mcp_docs_search_api", {"query": "DataCopy"}, id="mcp_search"),
        ToolCall("mcp_docs_env_probe", {}, id="mcp_env"),
        ToolCall("mcp_docs_big_page", {}, id="mcp_big"),
    ]
    answered = len(_tool_messages(body))
    if answered < len(steps):
        return Reply(tool_calls=[steps[answered]])
    return Reply(text="Read the DataCopy entry. [done]")


async def test_a_team_calls_a_tool_of_a_stdio_mcp_server_through_the_harness(
    runtime: LabRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = runtime.lab.settings
    monkeypatch.setenv("JK_MCP_PROBE", "passed on")
    monkeypatch.setenv("JK_MCP_HIDDEN", "not on the allow-list")
    monkeypatch.setenv("JK_LAB_ACCESS_TOKEN", LAB_SECRET)
    runtime.lab.secrets.set("mcp:docs_token", DOCS_TOKEN)
    mcp_file(settings).parent.mkdir(parents=True, exist_ok=True)
    mcp_file(settings).write_text(
        stdio_toml(
            ["search_api", "env_probe", "big_page"],
            extra='env = ["JK_MCP_PROBE"]\nsecret_env = { DOCS_TOKEN = "mcp:docs_token" }\n'
            "max_result_chars = 1000\n",
        )
    )
    async with scripted_run(runtime, "mcp tools", _docs_session, key=KEY) as arranged:
        await arranged.scheduler.run(seconds=120)
        bodies = arranged.server.chat_bodies
        errors = arranged.server.handler_errors
    assert not errors
    offered = {t["function"]["name"] for t in bodies[0]["tools"]}
    mcp_offered = {n for n in offered if n.startswith("mcp_")}
    assert mcp_offered == {"mcp_docs_search_api", "mcp_docs_env_probe", "mcp_docs_big_page"}
    assert "compile_kernel" in offered  # beside the lab's tools, not instead of them

    results = _tool_messages(bodies[-1])
    assert "DataCopy(dst, src, count)" in results["mcp_search"]
    probe = json.loads(results["mcp_env"])
    # confined: the lab's folder, the sandbox chain's PATH, only what the config passes on
    assert Path(probe["cwd"]) == settings.resolved_data_dir / "mcp" / "docs"
    assert not Path(probe["cwd"]).is_relative_to(settings.workspaces_dir)
    assert probe["path"] == "/usr/bin:/bin"
    assert "JK_MCP_PROBE" in probe["env"] and "DOCS_TOKEN" in probe["env"]
    assert "JK_MCP_HIDDEN" not in probe["env"] and "JK_LAB_ACCESS_TOKEN" not in probe["env"]
    assert not [n for n in probe["env"] if n.startswith("JUSTKERNEL_")]
    assert probe["token_sha256"] == hashlib.sha256(DOCS_TOKEN.encode()).hexdigest()
    with pytest.raises(ProcessLookupError):  # the call's server process is gone
        os.kill(probe["pid"], 0)
    big = results["mcp_big"]
    assert big.startswith("A" * 1000) and "49000 more characters cut" in big
    assert len(big) < 1100

    events = [(e.kind, e.payload) async for e in runtime.lab.events.iter_all(arranged.run.id)]
    calls = {p["id"]: p for k, p in events if k == "tool.call"}
    answers = {p["id"]: p for k, p in events if k == "tool.result"}
    assert calls["mcp_search"]["name"] == "mcp_docs_search_api"
    assert json.loads(calls["mcp_search"]["args"]) == {"query": "DataCopy"}
    assert answers["mcp_search"]["error"] is False
    assert "DataCopy(dst, src, count)" in answers["mcp_search"]["content"]
    assert {"mcp_env", "mcp_big"} <= set(answers)
    logged = json.dumps(events)
    assert DOCS_TOKEN not in logged and LAB_SECRET not in logged


async def test_a_bad_mcp_toml_pauses_the_team_with_the_reason(runtime: LabRuntime) -> None:
    settings = runtime.lab.settings
    mcp_file(settings).parent.mkdir(parents=True, exist_ok=True)
    mcp_file(settings).write_text(
        '[servers.docs]\ntransport = "streamable_http"\nurl = "http://docs.example.com/mcp"\n'
        'tools = ["search_api"]\nteams = ["*"]\n'
    )
    never = [Reply(text="never served")]
    async with scripted_run(runtime, "bad mcp.toml", never, key=KEY) as arranged:
        await arranged.scheduler.run(seconds=60)
        served = arranged.server.chat_bodies
    team = await runtime.lab.teams.get(arranged.run.id, arranged.team.id)
    assert team.status == "paused" and not served
    assert team.status_reason is not None
    assert "mcp.toml" in team.status_reason and "servers.docs" in team.status_reason
    assert "plain http is allowed only on loopback" in team.status_reason


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[servers.docs]\ntransport = 'stdio'\ncommand = 'x'\nteams = ['*']\n", "tools"),
        (stdio_toml(["search_api"], extra="env = ['OPENAI_API_KEY']"), "pass secrets with"),
        (stdio_toml(["search_api"], extra="secret_env = { T = 'judge_official_token' }"), "mcp:"),
        (stdio_toml(["search_api"], name="Docs"), "servers.Docs"),
        (stdio_toml(["search_api"], extra="shell = true"), "servers.docs.stdio.shell"),
        (
            "[servers.w]\ntransport = 'streamable_http'\nurl = 'https://u:p@h/mcp'\n"
            "tools = ['a']\nteams = ['*']\n",
            "credentials go in headers",
        ),
        ("[servers.docs\n", "not valid TOML"),
    ],
)
def test_a_bad_entry_is_refused_with_its_key(text: str, words: str) -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_mcp(text, "mcp.toml")
    assert str(caught.value).startswith("mcp.toml: ") and words in str(caught.value)


def test_names_two_entries_share_are_refused() -> None:
    clash = stdio_toml(["b_c"], name="a") + stdio_toml(["c"], name="a_b")
    with pytest.raises(McpConfigError, match=r"'mcp_a_b_c' is also servers\.a\.tools"):
        parse_mcp(clash, "mcp.toml")


def test_an_mcp_tool_cannot_shadow_a_lab_tool() -> None:
    def lab() -> str:
        return "lab"

    lab_tool = StructuredTool.from_function(lab, name="mcp_docs_search_api", description="x")
    other = StructuredTool.from_function(lab, name="mcp_docs_search_api", description="y")
    with pytest.raises(McpServerError, match="already a tool of the lab"):
        offered_tools([lab_tool], [other])


async def test_the_allow_list_holds_and_the_offline_model_gets_nothing(tmp_path: Path) -> None:
    secrets = SecretsStore(tmp_path / "config")
    config = parse_mcp(stdio_toml(["search_api"]), "mcp.toml")
    box = McpToolbox(lambda: config, secrets, tmp_path / "mcp")
    assert await box.tools_for("t1", "team-001", OFFLINE) == []
    (tool,) = await box.tools_for("t1", "team-001", ONLINE)
    assert tool.name == "mcp_docs_search_api"
    assert tool.metadata is not None and tool.metadata["needs_approval"] is True
    assert "Add(dst, src0, src1" in str(await tool.ainvoke({"query": "add"}))

    missing = parse_mcp(stdio_toml(["search_api", "delete_everything"]), "mcp.toml")
    box = McpToolbox(lambda: missing, secrets, tmp_path / "mcp")
    with pytest.raises(McpServerError, match="'delete_everything' not offered by the server"):
        await box.tools_for("t1", "team-001", ONLINE)


async def test_a_server_for_other_teams_or_a_missing_secret(tmp_path: Path) -> None:
    secrets = SecretsStore(tmp_path / "config")
    only = stdio_toml(["search_api"]).replace('teams = ["*"]', 'teams = ["team-002"]')
    box = McpToolbox(lambda: parse_mcp(only, "mcp.toml"), secrets, tmp_path / "mcp")
    assert await box.tools_for("t1", "team-001", ONLINE) == []
    assert len(await box.tools_for("t2", "team-002", ONLINE)) == 1
    needs = stdio_toml(["search_api"], extra="secret_env = { T = 'mcp:absent' }")
    box = McpToolbox(lambda: parse_mcp(needs, "mcp.toml"), secrets, tmp_path / "mcp")
    with pytest.raises(McpConfigError, match="secret 'mcp:absent' is not stored"):
        await box.tools_for("t1", "team-001", ONLINE)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _serving(port: int, process: asyncio.subprocess.Process) -> None:
    for _ in range(600):  # a readiness poll, not a timing assertion
        if process.returncode is not None:
            raise RuntimeError("the MCP test server exited before it listened")
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise RuntimeError("the MCP test server did not listen")


async def test_a_streamable_http_server_gets_its_header_from_the_secrets(tmp_path: Path) -> None:
    port = _free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVER),
        "--http",
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await _serving(port, process)
        secrets = SecretsStore(tmp_path / "config")
        secrets.set("mcp:docs_auth", "Bearer docs-http-token-77")
        text = (
            f"[servers.web]\ntransport = 'streamable_http'\nurl = 'http://127.0.0.1:{port}/mcp'\n"
            "headers = { Authorization = 'mcp:docs_auth' }\n"
            "tools = ['header_probe']\nteams = ['*']\n"
        )
        box = McpToolbox(lambda: parse_mcp(text, "mcp.toml"), secrets, tmp_path / "mcp")
        (tool,) = await box.tools_for("t1", "team-001", ONLINE)
        assert tool.name == "mcp_web_header_probe"
        (block,) = await tool.ainvoke({})  # one text block: what the lab lets through
        answer = json.loads(block["text"])
        digest = hashlib.sha256(b"Bearer docs-http-token-77").hexdigest()
        assert answer == {"authorization_sha256": digest}
    finally:
        process.terminate()
        await process.wait()


def _graph_tools(graph: Any) -> set[str]:
    return set(graph.nodes["tools"].bound.tools_by_name)


async def test_the_harness_never_gives_extra_tools_to_the_offline_model(
    runtime: LabRuntime,
) -> None:
    run = await runtime.lab.runs.create("mcp harness gate")
    team = await runtime.lab.teams.register(
        run.id,
        model_preset="x",
        model_label="X",
        workspaces_dir=runtime.lab.settings.workspaces_dir,
        config={},
    )
    ctx = team_context(runtime, run.id, team)

    async def on_pause(_team: str, _reason: str) -> None:
        return None

    governance = Governance(
        ModelCallLimiter(total=1),
        BudgetGovernor(BudgetCaps()),
        Watchdog(WatchdogLimits()),
        on_pause,
    )

    def docs(query: str) -> str:
        return query

    extra = StructuredTool.from_function(docs, name="mcp_docs_search_api", description="d")
    online = scripted_preset("http://127.0.0.1:9/v1")
    runtime.lab.secrets.set("scripted_key", KEY)
    for preset, offered in ((OFFLINE, False), (online, True)):
        agent, _signals = build_team_agent(
            ctx,
            chat_model(preset, runtime.lab.secrets),
            preset,
            governance,
            None,
            team_name=team.display_name,
            extra_tools=[extra],
        )
        tools = _graph_tools(agent.graph)
        assert "compile_kernel" in tools
        assert ("mcp_docs_search_api" in tools) is offered, preset.name
    clash = StructuredTool.from_function(docs, name="compile_kernel", description="d")
    with pytest.raises(McpServerError, match="'compile_kernel': the name is already a tool"):
        build_team_agent(
            ctx,
            chat_model(online, runtime.lab.secrets),
            online,
            governance,
            None,
            team_name=team.display_name,
            extra_tools=[clash],
        )
