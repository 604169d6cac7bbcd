"""Approval modes for a supervised team (issue #17, 4): which tool calls a person must approve
first, and which remembered grant lets a call through without asking. Pure rules, no I/O: the
desk (`agents.approval_desk`) keeps the rows and the middleware (`agents.middleware.approvals`)
asks, and both decide with these functions so the CLI, the dashboard and the agent agree.

- `auto`: nothing asks (the default: an unsupervised run behaves as before).
- `ask`: the chosen tools ask: a full simulation (`simulate_kernel` with mode "full", which
  freezes a passing source as a candidate for the Judger and so leads to official submission),
  sharing on the board (`send_message`, `record_experience`) and MCP tools whose server does
  not say otherwise (`needs_approval` in mcp.toml, on by default).
- `read_only`: the team may read, plan, compile and probe; every write of a file, every full
  simulation, every share and every MCP tool asks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ApprovalMode(StrEnum):
    READ_ONLY = "read_only"
    ASK = "ask"
    AUTO = "auto"


DEFAULT_MODE = ApprovalMode.AUTO
MCP_PREFIX = "mcp_"  # an MCP tool's team-facing name: mcp_<server>_<tool> (agents.mcp)
SIMULATE = "simulate_kernel"
SHARE_TOOLS = frozenset({"send_message", "record_experience"})
WRITE_TOOLS = frozenset({"write_file", "edit_file", "delete"})
ASK_DEFAULTS = frozenset({SIMULATE, *SHARE_TOOLS})  # (with mode "full" for simulate_kernel)
ARG_TEXT_LIMIT = 2000  # one string argument on a card
ARGS_JSON_LIMIT = 8000  # all of a call's arguments on a card


def parse_mode(value: str) -> ApprovalMode:
    """`value` as a mode; a ValueError that lists the modes otherwise."""
    try:
        return ApprovalMode(value)
    except ValueError:
        known = ", ".join(m.value for m in ApprovalMode)
        raise ValueError(f"unknown approval mode {value!r} (one of {known})") from None


def call_kind(tool_name: str, args: Mapping[str, Any]) -> str | None:
    """The kind of a call that a grant may name: a simulation's mode ("full" or "probe", full
    by default, as the tool's own default); None for other tools."""
    if tool_name == SIMULATE:
        mode = args.get("mode", "full")
        return mode if isinstance(mode, str) else "full"
    return None


def is_mcp(tool_name: str) -> bool:
    return tool_name.startswith(MCP_PREFIX)


def needs_approval(
    mode: ApprovalMode | str,
    tool_name: str,
    args: Mapping[str, Any],
    *,
    declared: bool | None = None,
) -> bool:
    """Whether a call of `tool_name` with `args` asks a person first in `mode`.

    `declared` is what the tool itself says (an MCP tool's `needs_approval` from its server's
    entry): in `ask` mode an MCP tool whose server says False passes; `read_only` asks for
    every MCP tool whatever its server says (the lab cannot know what it writes)."""
    mode = ApprovalMode(mode)
    if mode is ApprovalMode.AUTO:
        return False
    kind = call_kind(tool_name, args)
    if tool_name == SIMULATE:
        return kind != "probe"
    if tool_name in SHARE_TOOLS:
        return True
    if is_mcp(tool_name):
        return mode is ApprovalMode.READ_ONLY or declared is not False
    if mode is ApprovalMode.READ_ONLY:
        return tool_name in WRITE_TOOLS
    return False


@dataclass(frozen=True)
class GrantKey:
    """What a remembered grant covers: one team's calls of one tool (of one kind, when the
    grant names it: a grant for full simulations does not cover anything else)."""

    team_id: str
    tool: str
    kind: str | None = None

    def covers(self, team_id: str, tool_name: str, args: Mapping[str, Any]) -> bool:
        if team_id != self.team_id or tool_name != self.tool:
            return False
        return self.kind is None or self.kind == call_kind(tool_name, args)


def covered(
    grants: Iterable[GrantKey], team_id: str, tool_name: str, args: Mapping[str, Any]
) -> bool:
    """Whether any of `grants` lets this call through without asking."""
    return any(g.covers(team_id, tool_name, args) for g in grants)


def card_args(
    args: Mapping[str, Any], scrub: Callable[[str], str] = lambda text: text
) -> dict[str, Any]:
    """A call's arguments as a card shows them and the store keeps them: secrets scrubbed
    (`scrub`: the settings' redaction, passed in since the core imports nothing above it),
    each long string clipped, and the whole bounded (a longer object becomes its clipped
    JSON text under `_clipped`)."""

    def tidy(value: Any) -> Any:
        if isinstance(value, str):
            text = scrub(value)
            if len(text) > ARG_TEXT_LIMIT:
                return text[:ARG_TEXT_LIMIT] + f"… [{len(text) - ARG_TEXT_LIMIT} more chars]"
            return text
        if isinstance(value, Mapping):
            return {scrub(str(k)): tidy(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [tidy(v) for v in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        return tidy(str(value))

    shown = {scrub(str(k)): tidy(v) for k, v in args.items()}
    text = json.dumps(shown, ensure_ascii=False)
    if len(text) > ARGS_JSON_LIMIT:
        return {"_clipped": text[:ARGS_JSON_LIMIT] + "…"}
    return shown
