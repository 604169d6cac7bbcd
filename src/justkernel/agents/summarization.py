"""History summarisation that fits the team's model and is paid for like any other call.

Deep Agents condenses an agent's older history once its prompt grows past a trigger
(`SummarizationMiddleware`): it asks the model for a summary, writes the replaced messages to a
history file the agent can read back, and sends the summary plus the newest messages instead.
Left at its defaults it goes wrong three ways for us, each fixed here:

- its summary call goes straight to the model, outside the team's middlewares, so it took no
  model-call slot, no budget and left no event (about 12 % of a run's tokens went unseen). Here
  the summary call runs through the seat's own `BudgetMiddleware`, `EventsMiddleware` (with
  `purpose="summary"`) and `ModelCallSlotsMiddleware`, the same code a turn's call runs through;
- its trigger is a fixed 170k tokens for a model without a profile, past a 128k model's window.
  Here trigger, kept tail and the summary's own input derive from the preset's
  `context_window` (`context_limits`);
- it writes the history to `/conversation_history/`, which the workspace refuses (only the
  editable folders and `scratch/` may be written), and says so only in the log. Here the history
  goes to `/scratch/conversation_history/` (Deep Agents' `CompositeBackend.artifacts_root` is the
  documented switch for its location), and a write the workspace still refuses is an event,
  `history.offload_failed`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from deepagents.backends import CompositeBackend
from deepagents.backends.protocol import BackendProtocol, EditResult, WriteResult
from deepagents.middleware.summarization import (
    DEEPAGENTS_DEFAULT_SUMMARY_PROMPT,
    SummarizationMiddleware,
)
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, get_buffer_string
from langchain_core.runnables import RunnableConfig

from justkernel.agents.middleware.budget import BudgetMiddleware
from justkernel.agents.middleware.events import EventsMiddleware, SourceTracker
from justkernel.agents.middleware.shared import (
    Governance,
    ModelHandler,
    Place,
    Seat,
    call_runtime,
    content_text,
)
from justkernel.agents.middleware.slots import ModelCallSlotsMiddleware
from justkernel.core.events.agents import HistoryOffloadFailed
from justkernel.settings.models import ModelPreset
from justkernel.teams.workspace import SCRATCH_DIR

# a preset without `context_window`: the smallest window of the providers we ship (DeepSeek's
# 128k), so an unknown model is summarised early rather than overflowed
DEFAULT_CONTEXT_WINDOW = 128_000
# room left for the reply when the preset sets no output limit (at most a quarter of the window)
DEFAULT_OUTPUT_ROOM = 8_192
# summarise once the prompt reaches this share of what the window leaves for input: the
# prompt is counted approximately (characters/4, or the provider's last reported figure), so
# the margin covers the counting error and the step that grows the prompt past the trigger
TRIGGER_FRACTION = 0.80
# the newest messages kept verbatim after a summary: Deep Agents' own default share (0.10)
KEEP_FRACTION = 0.10
# the older history one summary call may read (its newest part, when there is more): half the
# input room, so the summary request itself always fits the window
SUMMARY_INPUT_FRACTION = 0.50
HISTORY_ROOT = f"/{SCRATCH_DIR}"  # Deep Agents writes <root>/conversation_history/<session>.md
SUMMARY_PURPOSE = "summary"


@dataclass(frozen=True)
class ContextLimits:
    """Token figures of one model's context, as the summarisation uses them."""

    window: int
    trigger_tokens: int  # summarise when the prompt reaches this
    keep_tokens: int  # the newest messages fitting in this many tokens stay verbatim
    summary_input_tokens: int  # the most older history one summary call reads


def context_limits(preset: ModelPreset) -> ContextLimits:
    """The preset's limits: from its `context_window` (or the default) minus its output room."""
    window = preset.context_window or DEFAULT_CONTEXT_WINDOW
    output_room = min(preset.max_output_tokens or DEFAULT_OUTPUT_ROOM, window // 4)
    room = window - output_room
    return ContextLimits(
        window=window,
        trigger_tokens=max(1, int(room * TRIGGER_FRACTION)),
        keep_tokens=max(1, int(room * KEEP_FRACTION)),
        summary_input_tokens=max(1, int(room * SUMMARY_INPUT_FRACTION)),
    )


def compose(chain: list[AgentMiddleware], call: ModelHandler) -> ModelHandler:
    """`call` wrapped by the middlewares' `awrap_model_call`, the first outermost (as
    LangChain's agent composes them)."""
    handler = call
    for middleware in reversed(chain):

        def wrapped(
            request: ModelRequest, _mw: AgentMiddleware = middleware, _next: ModelHandler = handler
        ) -> Awaitable[ModelResponse]:
            return _mw.awrap_model_call(request, _next)

        handler = wrapped
    return handler


class GovernedSummaries:
    """The summary calls of one seat, made through the seat's budget, events and slots.

    Deep Agents hands a custom `summarizer` the messages to condense; this renders them into
    Deep Agents' own summary prompt (what its built-in call would send) and asks the model
    through the same middleware code a turn's call goes through, in the same order (budget
    outside events outside the slot, `harness.team_middleware`). The watchdog is left out: a
    summary is not a response of the team's. No retry is added here: the chat model retries
    transport errors itself, and a pause (budget, provider) must stop the turn, not be retried.
    """

    def __init__(
        self,
        seat: Seat | Place,
        governance: Governance,
        source: SourceTracker | None,
        model: BaseChatModel,
        outer: Sequence[AgentMiddleware] = (),
    ) -> None:
        """`outer`: middlewares around the chain (a shared graph's team binding, which also
        routes the summary to the bound team's own model)."""
        self.model = model
        self.chain: list[AgentMiddleware] = [
            *outer,
            BudgetMiddleware(seat, governance),
            EventsMiddleware(seat, source, purpose=SUMMARY_PURPOSE),
            ModelCallSlotsMiddleware(seat, governance),
        ]

    async def summarize(self, messages: list[AnyMessage], config: RunnableConfig) -> str:
        """The summary text of `messages` (Deep Agents' `summarizer` protocol)."""
        prompt = DEEPAGENTS_DEFAULT_SUMMARY_PROMPT.format(
            messages=get_buffer_string(messages, format="xml")
        ).rstrip()

        async def ask(request: ModelRequest) -> ModelResponse:
            # the caller's config: its tags keep the summary out of the agent's streamed output
            message = await request.model.ainvoke(request.messages, config=config)
            return ModelResponse(result=[message])

        call = compose(self.chain, ask)
        # the graph call's runtime: in a shared graph it names the team (`Place.at`)
        request = ModelRequest(
            model=self.model, messages=[HumanMessage(prompt)], runtime=call_runtime()
        )
        response = await call(request)
        reply = next((m for m in response.result if isinstance(m, AIMessage)), None)
        return content_text(reply.content).strip() if reply is not None else ""


class HistoryBackend(CompositeBackend):
    """The workspace backend with Deep Agents' artefacts rooted in the team's `scratch/`, and
    every refused history write reported (`on_refused`) instead of only logged."""

    def __init__(
        self, workspace: BackendProtocol, on_refused: Callable[[str, str], Awaitable[None]]
    ) -> None:
        super().__init__(default=workspace, routes={}, artifacts_root=HISTORY_ROOT)
        self.on_refused = on_refused

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        result = await super().awrite(file_path, content)
        if result.error:
            await self.on_refused(file_path, result.error)
        return result

    async def aedit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,  # the protocol's signature
    ) -> EditResult:
        result = await super().aedit(file_path, old_string, new_string, replace_all=replace_all)
        if result.error:
            await self.on_refused(file_path, result.error)
        return result


def summarization_middleware(
    seat: Seat | Place,
    governance: Governance,
    source: SourceTracker | None,
    model: BaseChatModel,
    backend: BackendProtocol,
    *,
    outer: Sequence[AgentMiddleware] = (),
) -> AgentMiddleware:
    """The summarisation of one seat's agent, in place of Deep Agents' default (it has the
    default's name, so `create_deep_agent` puts it in the default's slot; a profile that
    excludes summarisation, the offline one, still drops it)."""
    limits = context_limits(seat.preset)

    async def refused(path: str, error: str) -> None:
        bound = seat.at(call_runtime())  # the team of the call that wrote the history
        await bound.ctx.emit(HistoryOffloadFailed(member=bound.member, path=path, error=error))

    summaries = GovernedSummaries(seat, governance, source, model, outer)
    return SummarizationMiddleware(
        model=model,
        backend=HistoryBackend(backend, refused),
        trigger=("tokens", limits.trigger_tokens),
        keep=("tokens", limits.keep_tokens),
        trim_tokens_to_summarize=limits.summary_input_tokens,
        # as Deep Agents does for a model whose window it knows: large file-tool arguments of
        # older messages are clipped at the trigger first, which may make the summary needless
        truncate_args_settings={
            "trigger": ("tokens", limits.trigger_tokens),
            "keep": ("tokens", limits.keep_tokens),
        },
        summarizer=summaries.summarize,
    )
