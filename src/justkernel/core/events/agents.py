"""Payloads of agent activity: model calls, tool calls, plans, source changes and receipts
(written by the team's events middleware and the team tools)."""

from __future__ import annotations

from typing import Any, ClassVar

from justkernel.core.events.base import EventPayload, Number, PayloadPart, described


class _AgentArea(EventPayload):
    AREA: ClassVar[str] = "Agent activity"
    TEAM: ClassVar[str] = "id"


class Usage(PayloadPart):
    """Tokens of one model response, exactly as the provider reported them."""

    preset: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None
    cost_usd: Number | None = described("null when the preset is unpriced")


class ToolCallRef(PayloadPart):
    id: str | None = None
    name: str | None = None
    args: str | None = described("JSON text, clipped")


class ModelResponse(_AgentArea):
    """A model answered one call of a team or of one of its members."""

    KIND: ClassVar[str] = "model.response"
    purpose: str | None = described(
        "turn: one step of the agent; summary: condensing older history to fit the context "
        "window (null in runs recorded before purposes: a turn)"
    )
    provider: str | None = described("")
    model: str | None = described("")
    preset: str | None = described("of the model that served the call")
    member: str | None = described("analyst, developer, reviewer; null for the team's own agent")
    offline: bool | None = described("true for the scripted offline playbook")
    seconds: Number | None = described("")
    usage: Usage | None = described("null when the provider reported none")
    usage_estimated: bool | None = described("true when a figure was guessed")
    text: str | None = described("the answer's text, clipped")
    tool_calls: list[ToolCallRef] | None = described("")


class ModelError(_AgentArea):
    """A model call failed; the provider error is classified."""

    KIND: ClassVar[str] = "model.error"
    purpose: str | None = described("turn or summary, as for model.response")
    provider: str | None = described("")
    member: str | None = described("")
    kind: str | None = described("auth, balance, rate_limit, timeout, …")
    message: str | None = described("safe to show: no secret")


class HistoryOffloadFailed(_AgentArea):
    """The older history a summary replaces could not be saved to the team's scratch/ folder:
    the summary still replaces it, so those messages are not recoverable by the agent."""

    KIND: ClassVar[str] = "history.offload_failed"
    member: str | None = described("")
    path: str | None = described("the workspace path it was to be written to")
    error: str | None = described("why the write failed, as the workspace said")


class ToolCall(_AgentArea):
    """An agent called a tool."""

    KIND: ClassVar[str] = "tool.call"
    id: str | None = described("tool call id")
    name: str | None = described("")
    member: str | None = described("who called it; null for the team's own agent")
    args: str | None = described("JSON text, clipped")


class ToolResult(_AgentArea):
    """A tool returned to the agent."""

    KIND: ClassVar[str] = "tool.result"
    id: str | None = described("")
    name: str | None = described("")
    member: str | None = described("")
    seconds: Number | None = described("")
    error: bool | None = described("true when the tool reported an error")
    content: str | None = described("clipped")


class Todo(PayloadPart):
    content: str | None = None
    status: str | None = described("pending, in_progress or completed")


class TodosUpdated(_AgentArea):
    """A team rewrote its to-do list."""

    KIND: ClassVar[str] = "todos.updated"
    todos: list[Todo] | None = described("")


class SourceChanged(_AgentArea):
    """A team's editable source tree changed."""

    KIND: ClassVar[str] = "source.changed"
    tree_sha256: str | None = described("")
    base_commit: str | None = described("")
    diff: str | None = described("unified diff of op_host/ and op_kernel/, clipped")


class ExperimentPlanned(_AgentArea):
    """A team recorded an experiment plan before changing its kernel."""

    KIND: ClassVar[str] = "experiment.planned"
    experiment: int | None = described("the plan's number in the team's notebook")
    failure_evidence: str | None = described("")
    hypothesis: str | None = described("")
    change: str | None = described("")
    validation_criterion: str | None = described("")
    case_ids: list[str] | None = described("")


class CasesProposed(_AgentArea):
    """A team proposed probe cases of its own: unconfirmed hypotheses for probes only."""

    KIND: ClassVar[str] = "cases.proposed"
    cases: list[dict[str, Any]] | None = described(
        "the proposed case specs, ids prefixed `x_<team>_`"
    )
    rationale: str | None = described("")
    input_hashes: list[str] | None = described("")


class FailedCase(PayloadPart):
    case_id: str | None = None
    outcome: str | None = None
    detail: str | None = None
    output: str | None = None
    error_ratio: Number | None = None
    max_abs_error: Number | None = None
    first_failures: list[Any] | None = None


class ReceiptSummary(PayloadPart):
    """What the agent was told of a receipt."""

    receipt_id: str | None = None
    mode: str | None = described("probe or full")
    status: str | None = None
    detail: str | None = None
    cache_hit: bool | None = None
    source_sha256: str | None = None
    cases_run: int | None = None
    cases_passed: int | None = None
    failed_cases: list[FailedCase] | None = None
    cycles: dict[str, int | None] | None = described("estimated cycles per performance case")
    total_est_cycles: int | None = None
    best_total_est_cycles_so_far: int | None = None


class Executor(PayloadPart):
    """Where a job ran."""

    host: str | None = None
    worker: str | None = None
    slot: int | None = None
    toolchain_id: str | None = None
    toolchain_version: str | None = None
    gcc: str | None = None
    valgrind: str | None = None
    sandbox: str | None = None
    cpu_model: str | None = None


class ExperimentReceipt(_AgentArea):
    """A simulation of a team's source finished with a receipt."""

    KIND: ClassVar[str] = "experiment.receipt"
    experiment: int | None = described("the plan it belongs to")
    commit: str | None = described("the workspace commit simulated")
    tree_sha256: str | None = described("")
    receipt: ReceiptSummary | None = described("")
    input_packs: dict[str, Any] | None = described("SHA-256 of the input packs used")
    executor: Executor | None = described("")
    blobs: list[str] | None = described("[SHA-256 of the full receipt JSON]")
