"""LangSmith tracing stays off in the lab, and costs nothing while off.

Nothing about a team (its prompts, sources, tool results) may leave the machine, so the lab turns
LangSmith tracing off whatever the environment says. And LangChain's agent factory wraps every
middleware's model and tool call in LangSmith's `traceable`, which even with tracing off hops to a
worker thread twice per wrapped call (about forty thread round trips per agent step, each a GIL
hand-over and a loop wake-up). LangSmith's documented runtime override runs those hops inline
instead. Even inline, a wrapper still builds its run context and a parent-run lookup per call
(a tenth of a step's lab CPU at ten teams), for a trace that is never sent: so the agent
factory's `traceable` is swapped for a decorator that returns the hook unwrapped, for every
graph compiled after `keep_traces_local`.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable
from typing import TypeVar

import langchain.agents.factory
import langsmith
import langsmith.utils

# LangChain's old v1 switches too: set alone, with v2 off, they make every agent call raise
_TRACING_SWITCHES = (
    "LANGSMITH_TRACING",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING",
    "LANGCHAIN_TRACING_V2",
    "LANGCHAIN_HANDLER",
)
T = TypeVar("T")


async def _inline(
    _default: object,
    ctx: contextvars.Context,
    func: Callable[..., T],
    /,
    *args: object,
    **kw: object,
) -> T:
    return ctx.run(func, *args, **kw)


def untraced(*_args: object, **_kw: object) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """`traceable`'s shape, tracing nothing: the decorated function is returned as it is."""

    def decorator(func: Callable[..., T]) -> Callable[..., T]:
        return func

    return decorator


def keep_traces_local() -> None:
    """Tracing off for this process, LangSmith's thread hops inline, and the agent factory's
    middleware hooks left unwrapped (idempotent)."""
    for name in _TRACING_SWITCHES:  # read by what looks at the environment only
        os.environ[name] = "false"
    langsmith.utils.get_env_var.cache_clear()  # a switch read before is read again
    langsmith.configure(enabled=False)  # ahead of the environment, even one read already
    langsmith.set_runtime_overrides(aio_to_thread=_inline)
    # the factory reads this module global when it compiles a graph (`create_agent`)
    langchain.agents.factory.traceable = untraced  # type: ignore[assignment]
