"""DeepSeek: thinking mode needs its `reasoning_content` back in the tool-call history.

In thinking mode DeepSeek answers a tool call with `reasoning_content` beside `tool_calls`, and
every later request must carry that field on that assistant message, or the API answers 400
("Missing `reasoning_content` field in the assistant message at message index N"). ChatOpenAI
never sends it; this class does, for every assistant message with tool calls (an empty string
when the response had none, which the API also requires). Plain answers are sent without it:
the API ignores it there, and older reasoner models rejected it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage

from justkernel.agents.provider_compat import REASONING_KEY, CompatChatOpenAI


class DeepSeekChatOpenAI(CompatChatOpenAI):
    """CompatChatOpenAI that passes `reasoning_content` back on tool-call turns."""

    def _get_request_payload(
        self,
        input_: LanguageModelInput,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> dict:
        messages = self._convert_input(input_).to_messages()
        payload = super()._get_request_payload(messages, stop=stop, **kwargs)
        # chat completions maps message i to payload["messages"][i]; strict so that a library
        # change that breaks this fails loudly instead of silently dropping the reasoning
        for message, wire in zip(messages, payload.get("messages", []), strict=True):
            if isinstance(message, AIMessage) and wire.get("tool_calls"):
                reasoning = message.additional_kwargs.get(REASONING_KEY)
                wire[REASONING_KEY] = reasoning if isinstance(reasoning, str) else ""
        return payload
