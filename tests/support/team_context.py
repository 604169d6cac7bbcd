"""A team's tool context and board tools, built as the scheduler builds them.

Attack tests call a team's board tools directly (no model in the loop); they share this setup so
each test shows only its attack.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool

from justkernel.a2a.board import LabBoard
from justkernel.agents.board_tools import BoardAccess, build_board_tools
from justkernel.agents.tools import TeamContext
from justkernel.app import LabRuntime
from justkernel.store.candidates import CandidateStore
from justkernel.store.experiments import ExperimentBook
from justkernel.store.teams import Team, TeamRegistry
from justkernel.teams.workspace import TeamWorkspace


def team_context(runtime: LabRuntime, run_id: str, team: Team) -> TeamContext:
    """The context `team`'s tools run in: its own workspace, the lab's evaluator and stores."""
    lab = runtime.lab
    return TeamContext(
        run_id=run_id,
        team_id=team.id,
        workspace=TeamWorkspace.create(team.workspace, runtime.operator),
        evaluator=runtime.evaluator,
        experiments=ExperimentBook(lab.db),
        events=lab.events,
        blobs=lab.blobs,
    )


def board_tools(runtime: LabRuntime, ctx: TeamContext) -> dict[str, BaseTool]:
    """The team's board tools by name, over the lab's real board and candidate store."""
    lab = runtime.lab
    store = CandidateStore(lab.db, lab.events, lab.blobs)
    board = LabBoard(lab.db, lab.events, TeamRegistry(lab.db))
    return {t.name: t for t in build_board_tools(ctx, BoardAccess(board, store))}
