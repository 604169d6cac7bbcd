"""The dashboard's "test connection": one tiny request with the preset as configured.

It is one call the way the agent makes them (`ainvoke` on the same chat model: streamed or not
as `providers.streams` says, with the same output limit and reasoning effort, flattened the
same way), so a provider that rejects
any of it fails here and not in the middle of a contest. No retries: the user wants the first
answer, good or bad.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.messages import HumanMessage

from justkernel.agents.errors import ProviderError, classify_error, describe
from justkernel.agents.providers import build_chat_model
from justkernel.agents.usage import UsageRecord, usage_from_message
from justkernel.settings.models import ModelPreset
from justkernel.settings.secrets import SecretsStore

PROBE_PROMPT = "Reply with the single word: ok"
_MAX_REPLY = 200


@dataclass(frozen=True, slots=True)
class ConnectionReport:
    """What the probe saw; `message` is one line for people, free of secrets."""

    preset: str
    ok: bool
    message: str
    latency_ms: float | None = None
    model: str | None = None
    reply: str | None = None
    usage: UsageRecord | None = None
    error: ProviderError | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


async def test_connection(
    preset: ModelPreset, secrets: SecretsStore, *, request_timeout: float = 30.0
) -> ConnectionReport:
    """Send one short prompt; report latency, the model the provider named, usage or the error."""
    started = time.perf_counter()
    try:
        model = build_chat_model(preset, secrets, max_retries=0, timeout=request_timeout)
        # `ainvoke`, as the agent calls the model: it streams when the preset streams
        reply = await model.ainvoke([HumanMessage(PROBE_PROMPT)])
    except Exception as exc:
        error = classify_error(exc)
        latency = None if error.kind == "config" else _elapsed_ms(started)
        return ConnectionReport(
            preset.name, False, describe(error, preset.name), latency_ms=latency, error=error
        )
    latency = _elapsed_ms(started)
    echoed = reply.response_metadata.get("model_name")
    usage = usage_from_message(preset, reply)
    note = "" if usage is not None else "; the provider reported no token usage"
    return ConnectionReport(
        preset.name,
        True,
        f"{preset.name}: {echoed or preset.model} answered in {latency:.0f} ms{note}",
        latency_ms=latency,
        model=echoed,
        reply=reply.text[:_MAX_REPLY],
        usage=usage,
    )


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
