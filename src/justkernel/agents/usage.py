"""Token usage and cost of one model response, as the provider reported it.

Counts come only from the provider's `usage` (LangChain's `usage_metadata`, streamed responses
included when `stream_usage` is on); nothing is estimated. A response without usage gives no
record, and a preset without prices gives `cost_usd=None` (unpriced), never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from justkernel.settings.models import ModelPreset

_PER_MTOK = 1_000_000


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """Tokens of one response; optional details stay None when the provider did not say."""

    preset: str
    model: str
    input_tokens: int
    output_tokens: int
    total: int
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cost_usd(preset: ModelPreset, input_tokens: int, output_tokens: int) -> float | None:
    """USD from the preset's per-Mtok prices; None when the preset is unpriced."""
    if preset.input_price_per_mtok is None or preset.output_price_per_mtok is None:
        return None
    return (
        input_tokens * preset.input_price_per_mtok + output_tokens * preset.output_price_per_mtok
    ) / _PER_MTOK


def usage_from_metadata(
    preset: ModelPreset, usage: Mapping[str, Any] | None, model: str | None = None
) -> UsageRecord | None:
    """A record from LangChain's `usage_metadata` dict, or None when there is none."""
    if not usage:
        return None
    input_tokens = int(usage.get("input_tokens") or 0)
    output_tokens = int(usage.get("output_tokens") or 0)
    total = usage.get("total_tokens")
    out_details = usage.get("output_token_details") or {}
    in_details = usage.get("input_token_details") or {}
    return UsageRecord(
        preset=preset.name,
        model=model or preset.model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total=int(total) if total is not None else input_tokens + output_tokens,
        reasoning_tokens=out_details.get("reasoning"),
        cached_input_tokens=in_details.get("cache_read"),
        cost_usd=cost_usd(preset, input_tokens, output_tokens),
    )


def usage_from_message(preset: ModelPreset, message: BaseMessage) -> UsageRecord | None:
    """The record of one assistant message (a streamed one once its chunks are merged)."""
    if not isinstance(message, AIMessage):
        return None
    model = message.response_metadata.get("model_name")
    return usage_from_metadata(preset, message.usage_metadata, model)


class UsageCallback(BaseCallbackHandler):
    """Hands a `UsageRecord` to `sink` for every model response of a run, subagents included.

    Pass it in `config={"callbacks": [...]}`; it runs inline, so `sink` must be quick.
    """

    run_inline = True

    def __init__(self, preset: ModelPreset, sink: Callable[[UsageRecord], None]) -> None:
        self.preset = preset
        self.sink = sink

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                if isinstance(generation, ChatGeneration):
                    record = usage_from_message(self.preset, generation.message)
                    if record is not None:
                        self.sink(record)
