"""DeepSeek thinking mode: `reasoning_content` must come back on tool-call turns.

The scripted server is as strict as DeepSeek: a request whose assistant tool-call message lacks
the `reasoning_content` it returned is answered 400, with DeepSeek's message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_openai import ChatOpenAI

from justkernel.agents.errors import classify_error
from justkernel.agents.providers import build_chat_model
from justkernel.settings.secrets import SecretsStore
from tests.agents.test_providers import KEY, add, ask, make_preset, run_tools
from tests.support.openai_server import OpenAIServer, Reply, ToolCall

FIRST_THOUGHT = "The user wants 2+3, then that plus 4. Call add first."


def thinking_script() -> list[Reply]:
    return [
        Reply(reasoning_content=FIRST_THOUGHT, tool_calls=[ToolCall("add", {"a": 2, "b": 3})]),
        # DeepSeek sometimes calls a tool without any reasoning: it still wants the field back
        Reply(reasoning_content="", tool_calls=[ToolCall("add", {"a": 5, "b": 4})]),
        Reply(reasoning_content="Both sums are known: 9.", text="9"),
        Reply(reasoning_content="A thank-you needs no tool.", text="You're welcome."),
    ]


@pytest.fixture
def secrets(tmp_path: Path) -> SecretsStore:
    store = SecretsStore(tmp_path / "config")
    store.set("test_key", KEY)
    return store


async def agent_turn(model, history: list[BaseMessage], stream: bool) -> AIMessage:
    """Model, tools, model ... until a plain answer, the way an agent loop drives it."""
    while True:
        reply = await ask(model, history, stream)
        history.append(reply)
        if not reply.tool_calls:
            return reply
        history.extend(run_tools(reply))


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_deepseek_multi_turn_tool_calls_pass_reasoning_back(
    secrets: SecretsStore, stream: bool
) -> None:
    async with OpenAIServer(thinking_script(), api_key=KEY, require_reasoning_passback=True) as srv:
        model = build_chat_model(make_preset(srv, "deepseek"), secrets, max_retries=0)
        model = model.bind_tools([add])
        history: list[BaseMessage] = [HumanMessage("What is 2+3, plus 4?")]
        answer = await agent_turn(model, history, stream)
        history.append(HumanMessage("thanks"))
        thanks = await agent_turn(model, history, stream)
    assert (answer.text, thanks.text) == ("9", "You're welcome.")
    assert [r.status for r in srv.requests] == [200, 200, 200, 200]
    # kept on the messages, streamed or not
    assert history[1].additional_kwargs["reasoning_content"] == FIRST_THOUGHT
    assert answer.additional_kwargs["reasoning_content"] == "Both sums are known: 9."
    # sent back on every tool-call turn, and only there
    sent = srv.chat_bodies[-1]["messages"]
    assistants = [m for m in sent if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in assistants] == [FIRST_THOUGHT, "", None]
    assert "reasoning_content" not in assistants[-1]


async def test_stock_chatopenai_drops_reasoning_and_is_rejected(secrets: SecretsStore) -> None:
    """The gap this provider closes: langchain-openai 1.7.4 neither keeps nor sends it."""
    async with OpenAIServer(thinking_script(), api_key=KEY, require_reasoning_passback=True) as srv:
        stock = ChatOpenAI(
            model="deepseek-chat", base_url=srv.base_url, api_key=KEY, max_retries=0
        ).bind_tools([add])
        history: list[BaseMessage] = [HumanMessage("What is 2+3, plus 4?")]
        first = await stock.ainvoke(history)
        assert "reasoning_content" not in first.additional_kwargs
        history += [first, *run_tools(first)]
        with pytest.raises(Exception) as raised:
            await stock.ainvoke(history)
    error = classify_error(raised.value)
    assert (error.kind, error.status) == ("bad_request", 400)
    assert "Missing `reasoning_content` field in the assistant message at message index 1" in (
        error.message
    )


async def test_other_providers_keep_reasoning_but_do_not_send_it(secrets: SecretsStore) -> None:
    script = [
        Reply(reasoning_content="think", tool_calls=[ToolCall("add", {"a": 1, "b": 1})]),
        Reply(text="2"),
    ]
    async with OpenAIServer(script, api_key=KEY) as srv:
        model = build_chat_model(make_preset(srv, "qwen"), secrets).bind_tools([add])
        history: list[BaseMessage] = [HumanMessage("1+1?")]
        assert (await agent_turn(model, history, stream=True)).text == "2"
    assert history[1].additional_kwargs["reasoning_content"] == "think"
    assert "reasoning_content" not in srv.chat_bodies[1]["messages"][1]


async def test_deepseek_thinking_survives_a_deep_agents_run(secrets: SecretsStore) -> None:
    """The same history rule through the real harness: streamed, merged, checkpointed."""
    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    def handler(body: dict) -> Reply:
        if not body.get("tools"):  # Deep Agents' summarizer calls without tools
            return Reply(text="summary")
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done < 2:
            return Reply(
                reasoning_content=f"step {done}", tool_calls=[ToolCall("add", {"a": done, "b": 1})]
            )
        return Reply(reasoning_content="finished", text="all added")

    async with OpenAIServer(handler, api_key=KEY, require_reasoning_passback=True) as srv:
        model = build_chat_model(make_preset(srv, "deepseek"), secrets, max_retries=0)
        agent = create_deep_agent(model=model, tools=[add], checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "t1"}}
        request = {"messages": [{"role": "user", "content": "add things"}]}
        async for _ in agent.astream(request, config, stream_mode=["updates", "messages"]):
            pass
        state = await agent.aget_state(config)
    assert state.values["messages"][-1].text == "all added"
    assert [r.status for r in srv.requests] == [200, 200, 200]
    assert srv.handler_errors == []
