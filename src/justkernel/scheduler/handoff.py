"""What a team's full simulation hands to the Judger: the scheduler freezes every measured
source (an immutable snapshot with its receipt) and, as the team's sharing policy allows,
broadcasts it to the other teams when it is the team's new best. Under the Judger's
official-driven strategy, sources that compiled but failed local precision are frozen too,
for diagnosis only: they are never shared as good candidates."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from justkernel.a2a.board import LabBoard
from justkernel.a2a.policies import SharingPolicy, can_receive_from_others, shares_publicly
from justkernel.core.targets import check_same_target
from justkernel.faults import crash_point
from justkernel.store.candidates import CandidateStore
from justkernel.store.teams import Team
from justkernel.teams.workspace import SCRATCH_DIR


def fetched_candidates(workspace: Path, policy: SharingPolicy | None = None) -> list[str]:
    """The candidate ids `fetch_candidate_source` left in the team's scratch/candidates/:
    names only (the store checks each against the run, and compares the frozen sources). A
    control team can fetch nothing, so a folder it made itself adopts nothing."""
    if policy is not None and not can_receive_from_others(policy):
        return []
    folder = workspace / SCRATCH_DIR / "candidates"
    if folder.is_symlink() or not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.is_symlink())


class CandidateHandoff:
    def __init__(
        self,
        run_id: str,
        candidates: CandidateStore,
        board: LabBoard,
        *,
        freeze_unverified: Callable[[], bool] = lambda: False,
        toolchain_id: str | None = None,
    ) -> None:
        """`freeze_unverified` says, at each full receipt, whether the Judger wants sources
        that compiled but failed local precision too (its official-driven strategy).
        `toolchain_id` is the run's target: a receipt of another toolchain is never frozen."""
        self.run_id = run_id
        self.toolchain_id = toolchain_id
        self.candidates = candidates
        self.board = board
        self.freeze_unverified = freeze_unverified

    async def receive(
        self,
        team: Team,
        policy: SharingPolicy,
        receipt: Any,
        files: dict[str, bytes],
        commit: str,
    ) -> str | None:
        """The frozen candidate's id for a full receipt, or None when nothing was frozen
        (TargetMismatch for a receipt of another target than the run's)."""
        if self.toolchain_id is not None:
            check_same_target(self.toolchain_id, receipt.executor.toolchain_id, "the receipt")
        if receipt.status == "measured":
            return await self._freeze_and_share(team, policy, receipt, files, commit)
        if receipt.status == "incorrect" and self.freeze_unverified():
            candidate, _new = await self.candidates.freeze(
                self.run_id,
                team.id,
                files,
                receipt,
                commit,
                fetched_candidates(team.workspace, policy),
            )
            return candidate.id
        return None

    async def _freeze_and_share(
        self,
        team: Team,
        policy: SharingPolicy,
        receipt: Any,
        files: dict[str, bytes],
        commit: str,
    ) -> str | None:
        """Freeze every measured source for the Judger; broadcast it when it is the team's
        new best (the broadcast-best policy), as the sharing policy allows."""
        previous = [
            c.cycles_sum
            for c in await self.candidates.list(self.run_id, team_id=team.id)
            if c.cycles_sum is not None and c.source_sha256 != receipt.source_sha256
        ]
        fetched = fetched_candidates(team.workspace, policy)
        candidate, _new = await self.candidates.freeze(
            self.run_id, team.id, files, receipt, commit, fetched
        )
        crash_point("freeze.after")
        cycles = candidate.cycles_sum
        is_best = cycles is not None and all(cycles < p for p in previous)
        # not only when new: a lab killed between the freeze and the post shares it when the
        # evaluation re-runs (the post is deduplicated, so a re-run never shares it twice)
        if is_best and shares_publicly(policy):
            await self.board.post(
                self.run_id,
                sender=team.id,
                sender_message_id=f"share:{candidate.id}",
                recipient="all",
                type="candidate",
                payload={
                    "candidate_id": candidate.id,
                    "total_est_cycles": cycles,
                    "receipt_id": candidate.receipt_key,
                    "source_sha256": candidate.source_sha256,
                    "summary": f"{team.display_name}: new best {cycles:,} est. cycles",
                },
            )
        return candidate.id
