"""Tracing off costs nothing per call: once `keep_traces_local` has run, a compiled agent calls
its middlewares' hooks directly, not through LangSmith's `traceable` wrapper (which built a run
context and looked up a parent run at every hook of every step, for a trace never sent)."""

from __future__ import annotations

import sys

from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from justkernel.agents.middleware.shared import ModelHandler
from justkernel.agents.tracing import keep_traces_local


class _CallerProbe(AgentMiddleware):
    """Notes the function that called its hook."""

    def __init__(self) -> None:
        super().__init__()
        self.callers: list[str] = []

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        self.callers.append(sys._getframe(1).f_code.co_name)
        return await handler(request)


async def test_a_graph_compiled_after_keep_traces_local_calls_its_hooks_unwrapped() -> None:
    keep_traces_local()
    probe = _CallerProbe()
    # a stand-in for a paid model API: the hook, not the model, is under test
    model = GenericFakeChatModel(messages=iter([AIMessage(content="hello back")]))
    agent = create_agent(model, middleware=[probe])
    result = await agent.ainvoke({"messages": [HumanMessage(content="hello")]})
    assert result["messages"][-1].content == "hello back"
    assert probe.callers, "the hook never ran"
    assert "async_wrapper" not in probe.callers, probe.callers
