"""`ChatOpenAI` for every chat completions preset: OpenAI, DeepSeek, Qwen, any compatible API.

It reports the preset's provider (`deepseek`, `qwen`, else `openai`) as its LangSmith provider,
which is also the key Deep Agents looks up harness profiles by. Three gaps in langchain-openai
1.7.4 matter for DeepSeek, Qwen and other compatible APIs:

- Deep Agents builds the system prompt as a list of text parts (each middleware appends one),
  and ChatOpenAI sends such a list as an array of `{"type": "text"}` parts; DeepSeek takes
  only a string for system and user content. A message whose content is text parts only is
  sent as one string here (the parts joined as they are: Deep Agents puts the blank line that
  separates them into the text), for every role but the assistant's; one with an image keeps
  its parts;
- it always sends the output limit as `max_completion_tokens`, which only OpenAI knows; the
  others read `max_tokens`, so the limit is renamed on the way out;
- it drops the non-standard `reasoning_content` field of responses (plain and streamed), so the
  model's thinking is lost; it is kept here in `AIMessage.additional_kwargs["reasoning_content"]`
  (where langchain-core's content blocks look for it, and where DeepSeek's replay finds it);
- a streamed tool call's arguments are parsed leniently when the chunks are merged (arguments
  that are not JSON become `{}`), so the model's mistake would be lost; the arguments as they
  were streamed are kept in `response_metadata["tool_call_arguments"]` (call id -> text), where
  `agents.middleware.tool_calls` finds a malformed call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import LangSmithParams, LanguageModelInput
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI

REASONING_KEY = "reasoning_content"
ARGUMENTS_KEY = "tool_call_arguments"
FLATTENED_ROLES = frozenset({"system", "developer", "user", "tool"})


def flatten_text_parts(messages: list[dict[str, Any]]) -> None:
    """Each wire message of `FLATTENED_ROLES` whose content is a list of text parts only gets
    the joined text as its content, in place."""
    for message in messages:
        content = message.get("content")
        if message.get("role") not in FLATTENED_ROLES or not isinstance(content, list):
            continue
        if all(isinstance(p, Mapping) and p.get("type") == "text" for p in content):
            message["content"] = "".join(str(p.get("text") or "") for p in content)


def _field(obj: Any, name: str) -> Any:
    """A field of a response part, whether it is a dict or an SDK model with extra fields."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


class CompatChatOpenAI(ChatOpenAI):
    """Chat completions with string content, the limit under the provider's name and
    reasoning kept."""

    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    # reported as `ls_provider`: Deep Agents picks harness profiles by it, LangSmith shows it
    provider_name: str = "openai"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = self.provider_name
        return params

    def _get_request_payload(
        self,
        input_: LanguageModelInput,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        flatten_text_parts(payload.get("messages") or [])
        if self.max_tokens_param == "max_tokens" and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload

    def _create_chat_result(
        self,
        response: dict | openai.BaseModel,
        generation_info: dict | None = None,
    ) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        choices = _field(response, "choices") or []
        for generation, choice in zip(result.generations, choices, strict=False):
            reasoning = _field(_field(choice, "message"), REASONING_KEY)
            if isinstance(reasoning, str):
                generation.message.additional_kwargs[REASONING_KEY] = reasoning
        return result

    def _convert_chunk_to_generation_chunk(
        self,
        chunk: dict,
        default_chunk_class: type,
        base_generation_info: dict | None,
    ) -> ChatGenerationChunk | None:
        generation = super()._convert_chunk_to_generation_chunk(
            chunk, default_chunk_class, base_generation_info
        )
        choices = chunk.get("choices") or []
        if generation is not None and choices:
            reasoning = (choices[0].get("delta") or {}).get(REASONING_KEY)
            if isinstance(reasoning, str) and reasoning:
                # chunk merging concatenates string values of additional_kwargs
                generation.message.additional_kwargs[REASONING_KEY] = reasoning
        return generation

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        ids: dict[int, str] = {}
        texts: dict[int, str] = {}
        async for generation in super()._astream(messages, stop, run_manager, **kwargs):
            message = generation.message
            for part in getattr(message, "tool_call_chunks", None) or []:
                index = part.get("index") or 0
                if part.get("id"):
                    ids[index] = part["id"]
                texts[index] = texts.get(index, "") + (part.get("args") or "")
            yield generation
        if ids:  # one more (empty) chunk: the arguments as streamed, merged into the message
            raw = {ids[i]: texts.get(i, "") for i in ids}
            yield ChatGenerationChunk(
                message=AIMessageChunk(content="", response_metadata={ARGUMENTS_KEY: raw})
            )
