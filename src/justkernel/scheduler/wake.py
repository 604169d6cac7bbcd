"""The prompt of a turn that starts with news on the board: it says what arrived.

A team that had finished is woken when its inbox holds news (`Scheduler._eligible`); with the
generic "Continue" a model could answer "[done]" without reading it, be woken again for the
same news at once, and loop until the watchdog paused it, its deliveries pending for good. So
the woken turn's prompt names each message (its kind, sender and summary: an official result,
a candidate another team shared, a lesson), and the scheduler acknowledges the messages the
prompt showed once the turn ends (`LabBoard.ack_shown`): news shown once never stays pending,
and a team that ignores it is not woken again for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from justkernel.agents.playbook import DONE_MARKER
from justkernel.store.board import BoardMessage

SHOWN = 10  # messages one prompt names; the rest wait for the next turn (or read_inbox)
_SUMMARY_LIMIT = 300

_KINDS = {
    "feedback": "official feedback",
    "candidate": "a shared candidate",
    "experience": "a shared lesson",
    "message": "a message",
}


def _sender(message: BoardMessage) -> str:
    if message.sender == "judger":
        return "the Judger"
    if message.sender == "lab":
        return "the lab"
    return f"team {message.sender}"


def _line(message: BoardMessage) -> str:
    payload = message.payload
    summary = str(payload.get("summary") or payload.get("text") or "").strip()
    summary = " ".join(summary.split())[:_SUMMARY_LIMIT] or "(no summary)"
    refs = [
        f"{key} {payload[key]}"
        for key in ("candidate_id", "submission_id", "status")
        if payload.get(key) is not None and str(payload[key]) not in summary
    ]
    extra = f" ({', '.join(refs)})" if refs else ""
    kind = _KINDS.get(message.type, message.type)
    return f"- {kind} from {_sender(message)}: {summary}{extra}"


def wake_prompt(news: Sequence[BoardMessage]) -> str:
    """The turn's first message, naming the first `SHOWN` messages of `news` (oldest first)."""
    shown = list(news[:SHOWN])
    more = len(news) - len(shown)
    lines = [f"News arrived on the lab board since your last turn ({len(news)}):"]
    lines += [_line(m) for m in shown]
    if more > 0:
        lines.append(f"- and {more} more")
    lines.append(
        "Call read_inbox to read them whole (an official result lists each hidden point's "
        "outcome), then act on them: fix what an official failure names, adopt or build on a "
        f"better shared candidate, or plan your next experiment. If nothing is left to try, "
        f"answer {DONE_MARKER}. These messages count as seen after this turn."
    )
    return "\n".join(lines)
