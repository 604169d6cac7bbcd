"""LangChain's per-call signature inspection, remembered.

At every tool call LangChain asks of the tool's function which parameters it takes
(`inspect.signature`) and which one is typed `RunnableConfig` (`typing.get_type_hints`), and at
every model call whether `_agenerate` takes a run manager: the same answer for the same
function, worked out again each time (a couple of percent of an agent step's lab CPU).
`remember_signatures` puts a memory in front of both where the tool and chat-model modules look
them up. The key is the function (for a bound method: its function, and that it is bound, since
every instance's method has the same parameters), so a model instance, which pydantic makes
unhashable, is never a key.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, TypeVar

import langchain_core.language_models.chat_models as chat_models
import langchain_core.tools.base as tools_base
import langchain_core.tools.structured as tools_structured

T = TypeVar("T")
MAX_REMEMBERED = 4096  # functions per question; past it the memory starts again
# where LangChain looks each question up (each module imported the function by name)
_ASKED_IN = {
    "_signature_parameters": (tools_base, tools_structured, chat_models),
    "_get_runnable_config_param": (tools_base, tools_structured),
}


def remembered(inspect_: Callable[[Callable[..., Any]], T]) -> Callable[[Callable[..., Any]], T]:
    """`inspect_` answered once per function; a callable that cannot be a key is asked as
    it is."""
    answers: dict[tuple[bool, Any], T] = {}

    def ask(func: Callable[..., Any]) -> T:
        bound = isinstance(func, types.MethodType)
        key = (bound, func.__func__ if bound else func)
        try:
            return answers[key]
        except KeyError:
            pass
        except TypeError:
            return inspect_(func)
        if len(answers) >= MAX_REMEMBERED:
            answers.clear()
        answer = answers[key] = inspect_(func)
        return answer

    ask.__wrapped__ = inspect_  # type: ignore[attr-defined]
    return ask


def remember_signatures() -> None:
    """Install the memories (idempotent: an installed one is not wrapped again)."""
    for name, modules in _ASKED_IN.items():
        original = getattr(tools_base, name)
        original = getattr(original, "__wrapped__", original)
        ask = remembered(original)
        for module in modules:
            if getattr(getattr(module, name), "__wrapped__", None) is None:
                setattr(module, name, ask)
