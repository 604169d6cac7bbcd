"""LangChain's per-call signature questions are answered once per function, with the answers
LangChain itself gives, and a tool still gets its config and callbacks."""

from __future__ import annotations

import inspect
from typing import Any

import langchain_core.tools.structured as tools_structured
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langchain_core.tools.base import _get_runnable_config_param

from justkernel.agents.signatures import remember_signatures, remembered


def test_an_answer_is_the_original_one_and_is_worked_out_once_per_function() -> None:
    asked: list[Any] = []

    def count(func: Any) -> Any:
        asked.append(func)
        return inspect.signature(func).parameters

    ask = remembered(count)

    class Model:
        __hash__ = None  # type: ignore[assignment]  # as pydantic makes a model

        def _agenerate(self, messages: list[str], run_manager: object = None) -> None: ...

    first, second = Model(), Model()
    assert "run_manager" in ask(first._agenerate)
    assert ask(second._agenerate) is ask(first._agenerate)  # same function, other instance
    assert "self" in ask(Model._agenerate)  # the plain function is a question of its own
    assert len(asked) == 2


async def test_a_tool_still_receives_its_config_once_remembered() -> None:
    remember_signatures()
    remember_signatures()  # idempotent: not wrapped twice
    assert tools_structured._get_runnable_config_param.__wrapped__ is _unwrapped()
    seen: list[Any] = []

    async def probe(case: str, config: RunnableConfig) -> str:
        seen.append(config.get("metadata", {}).get("team"))
        return case

    tool = StructuredTool.from_function(coroutine=probe, name="probe", description="probe")
    for team in ("team-001", "team-002"):
        assert await tool.ainvoke({"case": "c1"}, {"metadata": {"team": team}}) == "c1"
    assert seen == ["team-001", "team-002"]


def _unwrapped() -> Any:
    return getattr(_get_runnable_config_param, "__wrapped__", _get_runnable_config_param)
