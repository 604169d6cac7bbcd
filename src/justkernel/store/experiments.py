"""Experiment plans and their outcomes: the team's lab notebook, in the database.

A plan (failure evidence, one hypothesis, the change, the validation criterion, case ids) must
be recorded before a simulation; the full simulation that follows closes it with the receipt.
Recording is idempotent per tool call, so a tool call re-run after a crash does not add a plan.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, insert, select, update

from justkernel.core.records.experiments import Experiment
from justkernel.store.database import Database, where_given
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import experiments


class ExperimentBook:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def record_plan(
        self, run_id: str, team_id: str, plan: dict[str, Any], tool_call_id: str
    ) -> tuple[Experiment, bool]:
        """The plan's experiment, and whether it is new (False: this call was recorded)."""
        existing = await self._by_plan_field(run_id, team_id, "tool_call_id", tool_call_id)
        if existing is not None:
            return existing, False
        now = utc_now_iso()
        row = {
            "run_id": run_id,
            "team_id": team_id,
            "plan": {**plan, "tool_call_id": tool_call_id},
            "status": "planned",
            "created_at": now,
            "updated_at": now,
        }
        async with self._db.writer.begin() as conn:
            number = (
                await conn.execute(
                    select(func.coalesce(func.max(experiments.c.number), 0)).where(
                        experiments.c.run_id == run_id, experiments.c.team_id == team_id
                    )
                )
            ).scalar_one() + 1
            await conn.execute(insert(experiments).values(number=number, **row))
        # the row as written (the columns not given are empty): no second read for it
        empty = {"commit": None, "tree_sha256": None, "receipt_key": None, "cycles_sum": None}
        return Experiment.from_row({**row, **empty, "number": number}), True

    async def _by_plan_field(
        self, run_id: str, team_id: str, field: str, value: str
    ) -> Experiment | None:
        """The team's latest experiment whose plan holds `value` under `field`: one indexed
        row read, not the team's whole notebook."""
        return await self._db.record(
            Experiment,
            select(experiments)
            .where(
                experiments.c.run_id == run_id,
                experiments.c.team_id == team_id,
                experiments.c.plan[field].as_string() == value,
            )
            .order_by(experiments.c.number.desc())
            .limit(1),
        )

    async def closed_by_call(
        self, run_id: str, team_id: str, tool_call_id: str
    ) -> Experiment | None:
        """The experiment this tool call closed, if it did."""
        return await self._by_plan_field(run_id, team_id, "closed_by", tool_call_id)

    async def get(self, run_id: str, team_id: str, number: int) -> Experiment:
        async with self._db.reader.connect() as conn:
            row = (
                await conn.execute(
                    select(experiments).where(
                        experiments.c.run_id == run_id,
                        experiments.c.team_id == team_id,
                        experiments.c.number == number,
                    )
                )
            ).one()
        return Experiment.from_row(row)

    async def list(self, run_id: str, team_id: str | None = None) -> list[Experiment]:
        query = where_given(
            select(experiments).where(experiments.c.run_id == run_id),
            (experiments.c.team_id, team_id),
        )
        return await self._db.records(Experiment, query.order_by(experiments.c.number))

    async def open_plan(self, run_id: str, team_id: str) -> Experiment | None:
        """The latest plan not yet closed by a full simulation."""
        latest = await self._db.record(
            Experiment,
            select(experiments)
            .where(experiments.c.run_id == run_id, experiments.c.team_id == team_id)
            .order_by(experiments.c.number.desc())
            .limit(1),
        )
        return latest if latest is not None and latest.status == "planned" else None

    async def close(
        self,
        experiment: Experiment,
        *,
        status: str,
        commit: str,
        tree_sha256: str,
        receipt_key: str,
        cycles_sum: int | None,
        closed_by: str | None = None,
    ) -> None:
        """Close the plan with its receipt; `closed_by` names the tool call that did, so the
        same call re-run after a crash finds its experiment again (`closed_by_call`)."""
        await self._db.write(
            update(experiments)
            .where(
                experiments.c.run_id == experiment.run_id,
                experiments.c.team_id == experiment.team_id,
                experiments.c.number == experiment.number,
            )
            .values(
                status=status,
                commit=commit,
                tree_sha256=tree_sha256,
                receipt_key=receipt_key,
                cycles_sum=cycles_sum,
                plan={**experiment.plan, "closed_by": closed_by},
                updated_at=utc_now_iso(),
            )
        )
