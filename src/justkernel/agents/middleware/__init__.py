"""The team's middlewares: each does one thing to the agent's model and tool calls.

`inbox.InboxAcksMiddleware` acknowledges inbox reads the history holds; `watchdog` nudges or
pauses a team that makes no progress and counts its responses; `budget` reserves and settles
each call's tokens and cost; `events` records model calls, tool calls and source changes;
`slots` holds one of the provider's model-call slots while the model runs. `harness.py` composes
them, in an order its `team_middleware` explains. What they share (who is calling, the run-wide
limits, what the scheduler reads after a turn) is in `shared`.
"""

from justkernel.agents.middleware.inbox import inbox_reads
from justkernel.agents.middleware.shared import Governance, Seat, TeamPaused, TeamSignals

__all__ = ["Governance", "Seat", "TeamPaused", "TeamSignals", "inbox_reads"]
