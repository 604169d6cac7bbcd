"""The budget's prompt estimate names each tool without rendering it: a tool's repr (a
pydantic model with its schema) cost milliseconds per step when computed for every tool."""

from __future__ import annotations

from justkernel.agents.middleware.budget import tool_name


class _Tool:
    name = "simulate_kernel"

    def __str__(self) -> str:
        raise AssertionError("the tool was rendered")

    __repr__ = __str__


def test_a_named_tool_is_counted_by_its_name_and_never_rendered() -> None:
    assert tool_name(_Tool()) == "simulate_kernel"


def test_a_provider_tool_without_a_name_is_counted_by_its_text() -> None:
    assert tool_name({"type": "web_search"}) == "{'type': 'web_search'}"
