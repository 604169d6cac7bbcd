"""Fold a run's events into its current state: teams, plans, best cycles, usage, the A2A graph,
the Judger's candidates and official results, and the evaluation jobs.

Only the event log is read (docs/events.md), so a live run, an imported replay and the demo
fold the same way. `feed` is incremental, and only the kinds in `FOLDED_KINDS` carry state:
a reader asks the store for those alone (tool returns, a third of a log, are never read; tool
calls are, for the one that adopts a candidate) and then `advance`s to the run's last sequence
number.

Payloads are read through their kind's model (`justkernel.core.events`), so a field the
writer renamed fails the type check, not the dashboard; a payload of the wrong shape (a
hand-edited bundle) is counted in `malformed` and changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from justkernel.core.events import EventPayload
from justkernel.core.events.agents import (
    ExperimentPlanned,
    ExperimentReceipt,
    ModelResponse,
    ReceiptSummary,
    TodosUpdated,
    ToolCall,
)
from justkernel.core.events.collab import (
    A2AEvaluation,
    A2AMessage,
    CandidateFrozen,
    JudgerModelReview,
    OfficialResult,
)
from justkernel.core.events.runs import (
    DispatchStopped,
    ProviderPaused,
    ProviderResumed,
    RunSummary,
    TeamExited,
    TeamPaused,
    TeamRegistered,
    TeamTurnEnd,
)
from justkernel.events import Event, EventLog
from justkernel.reports.approvals_fold import ApprovalsFold
from justkernel.reports.health_fold import HealthFold
from justkernel.reports.judger_fold import JudgerFold
from justkernel.reports.team_state import Job, TeamState, Usage

READ_PAGE = 2000
OUTSIDE = "external"  # the fold's status of an outside agent's team: it never takes a turn
JUDGER_NODE = "judger"
LAB_NODE = "lab"
ADOPTION_TOOL = "fetch_candidate_source"  # the tool call that adopts another team's candidate
MAX_EDGES = 400  # the most recent edges drawn (100 teams broadcasting make ~10,000 pairs)
SERIES_LIMIT = 400  # improvements kept per team for the plot (they are rare)


@dataclass
class RunState:
    """Everything the dashboard and the report show about one run, as of `last_seq`."""

    run_id: str
    last_seq: int = 0
    first_ts: str | None = None
    last_ts: str | None = None
    teams: dict[str, TeamState] = field(default_factory=dict)
    dispatch: str | None = None  # running, stopped (None: never dispatched)
    dispatch_reason: str | None = None
    dispatch_reason_coded: tuple[str | None, dict[str, Any] | None] = (None, None)
    edges: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    judger: JudgerFold = field(default_factory=JudgerFold)
    approvals: ApprovalsFold = field(default_factory=ApprovalsFold)
    health: HealthFold = field(default_factory=HealthFold)
    jobs: list[Job] = field(default_factory=list)
    providers: dict[str, Usage] = field(default_factory=dict)
    members: dict[tuple[str, str], Usage] = field(default_factory=dict)  # (team, role)
    judger_usage: Usage = field(default_factory=Usage)  # the Judger's model reviewer
    summary: dict[str, Any] | None = None
    paused_providers: dict[str, str] = field(default_factory=dict)
    malformed: int = 0  # folded kinds whose payload did not fit the kind's model

    @property
    def candidates(self) -> dict[str, dict[str, Any]]:
        return self.judger.candidates

    @property
    def official(self) -> list[dict[str, Any]]:
        return self.judger.official

    @property
    def champion(self) -> dict[str, Any] | None:
        return self.judger.champion

    # -- feeding ----------------------------------------------------------------------------
    def feed(self, event: Event) -> None:
        if event.seq <= self.last_seq:
            return
        self.last_seq = event.seq
        self.first_ts = self.first_ts or event.ts
        self.last_ts = event.ts
        if event.team is not None:
            team = self._team(event.team)
            team.last_seq, team.last_ts = event.seq, event.ts
        handler = _HANDLERS.get(event.kind)
        if handler is None:
            return
        try:
            payload = event.typed()
        except ValidationError:
            self.malformed += 1
            return
        handler(self, event, payload)

    def feed_all(self, events: list[Event]) -> None:
        for event in events:
            self.feed(event)

    def advance(self, seq: int) -> None:
        """Every event up to `seq` was read (only `FOLDED_KINDS` are; others change nothing)."""
        self.last_seq = max(self.last_seq, seq)

    def _team(self, team_id: str) -> TeamState:
        team = self.teams.get(team_id)
        if team is None:
            team = self.teams[team_id] = TeamState(team_id)
        return team

    # -- handlers ---------------------------------------------------------------------------
    def _registered(self, event: Event, p: TeamRegistered) -> None:
        team = self._team(event.team or "?")
        team.display_name = p.display_name or team.id
        team.model_preset = p.model_preset
        team.provider = p.provider
        team.offline = bool(p.offline)
        team.config = p.config or {}
        team.baseline_commit = p.baseline_commit
        team.registered_seq = event.seq
        team.external = bool(team.config.get("external"))
        if team.external and not team.exited:
            team.status = OUTSIDE

    def _turn(self, event: Event, _p: EventPayload) -> None:
        team = self._team(event.team or "?")
        team.running, team.status = True, "running"
        team.set_reason(None)

    def _turn_end(self, event: Event, p: TeamTurnEnd) -> None:
        self.health.turn_end(event, p)
        team = self._team(event.team or "?")
        team.running = False
        if not team.exited:
            team.status = p.status or "idle"
            team.set_reason(p.detail, p.reason_code, p.reason_params)

    def _paused(self, event: Event, p: TeamPaused) -> None:
        team = self._team(event.team or "?")
        team.status = "paused"
        team.set_reason(p.reason, p.reason_code, p.reason_params)

    def _resumed(self, event: Event, _p: EventPayload) -> None:
        team = self._team(event.team or "?")
        if not team.exited:
            team.status = OUTSIDE if team.external else "idle"
            team.set_reason(None)

    def _exited(self, event: Event, p: TeamExited) -> None:
        team = self._team(event.team or "?")
        team.exited, team.running = True, False
        team.status = "exited"
        team.set_reason(p.reason, p.reason_code, p.reason_params)

    def _dispatch_started(self, _event: Event, _p: EventPayload) -> None:
        self.dispatch, self.dispatch_reason = "running", None
        self.dispatch_reason_coded = (None, None)
        self.health.dispatch_started()

    def _dispatch_stopped(self, _event: Event, p: DispatchStopped) -> None:
        self.dispatch, self.dispatch_reason = "stopped", p.reason
        self.dispatch_reason_coded = (p.reason_code, p.reason_params)
        for team in self.teams.values():
            team.running = False
            if team.status == "running":
                team.status = "idle"

    def _provider_paused(self, _event: Event, p: ProviderPaused) -> None:
        # keyed by the connection (a preset: what a person resumes); older runs paused a type
        self.paused_providers[str(p.connection or p.provider or "?")] = str(
            p.reason or p.kind or ""
        )

    def _provider_resumed(self, _event: Event, p: ProviderResumed) -> None:
        self.paused_providers.pop(str(p.connection or p.provider or "?"), None)

    def _model_response(self, event: Event, p: ModelResponse) -> None:
        usage, estimated = p.usage, bool(p.usage_estimated)
        if event.team is not None:
            self._team(event.team).usage.add(usage, estimated)
        provider = str(p.provider or "?")
        self.providers.setdefault(provider, Usage()).add(usage, estimated)
        if event.team is not None and p.member:
            self.members.setdefault((event.team, p.member), Usage()).add(usage, estimated)

    def _model_review(self, _event: Event, p: JudgerModelReview) -> None:
        if p.usage is not None and p.usage.model_fields_set:
            self.judger_usage.add(p.usage, False)

    def _todos(self, event: Event, p: TodosUpdated) -> None:
        team = self._team(event.team or "?")
        team.todos = [t.to_payload() for t in p.todos or []]
        team.todos_seq = event.seq

    def _source(self, event: Event, _p: EventPayload) -> None:
        self._team(event.team or "?").source_changes += 1

    def _planned(self, event: Event, p: ExperimentPlanned) -> None:
        team = self._team(event.team or "?")
        number = p.experiment or len(team.experiments) + 1
        team.experiments[number] = {
            "number": number,
            "seq": event.seq,
            "ts": event.ts,
            "hypothesis": p.hypothesis,
            "change": p.change,
            "validation_criterion": p.validation_criterion,
            "failure_evidence": p.failure_evidence,
            "case_ids": p.case_ids or [],
            "status": "planned",
            "receipts": [],
        }

    def _receipt(self, event: Event, p: ExperimentReceipt) -> None:
        team = self._team(event.team or "?")
        receipt = p.receipt or ReceiptSummary()
        number = p.experiment
        blobs = p.blobs or []
        job = Job(
            seq=event.seq,
            ts=event.ts,
            team=team.id,
            experiment=number,
            receipt_id=receipt.receipt_id,
            mode=receipt.mode,
            status=receipt.status,
            cache_hit=bool(receipt.cache_hit),
            cycles=receipt.total_est_cycles,
            executor=p.executor.to_payload() if p.executor is not None else {},
            blob=blobs[0] if blobs else None,
        )
        self.jobs.append(job)
        brief = {
            "seq": event.seq,
            "ts": event.ts,
            "receipt_id": job.receipt_id,
            "mode": job.mode,
            "status": job.status,
            "cycles": job.cycles,
            "cases_run": receipt.cases_run,
            "cases_passed": receipt.cases_passed,
            "source_sha256": receipt.source_sha256,
            "commit": p.commit,
        }
        if isinstance(number, int):
            plan = team.experiments.setdefault(
                number, {"number": number, "status": "planned", "receipts": []}
            )
            plan["receipts"].append(brief)
            if job.mode == "full":
                plan["status"] = job.status
        if job.mode == "full" and job.status == "measured" and job.cycles is not None:
            if team.baseline_cycles is None:
                team.baseline_cycles = job.cycles
            if team.best_cycles is None or job.cycles < team.best_cycles:
                team.best_cycles = job.cycles
                team.best = {
                    **brief,
                    "experiment": number,
                    "tree_sha256": p.tree_sha256,
                    "input_packs": p.input_packs,
                    "executor": job.executor,
                    "blob": job.blob,
                    "cycles_by_case": receipt.cycles,
                }
                if len(team.series) < SERIES_LIMIT:
                    team.series.append([event.ts, event.seq, job.cycles])

    def _message(self, event: Event, p: A2AMessage) -> None:
        sender = event.team or p.sender or (JUDGER_NODE if p.type == "feedback" else LAB_NODE)
        recipients = p.recipients
        if recipients is None:  # an older log without the list; [] is a broadcast to nobody
            if p.to in (None, "all"):
                recipients = [t for t, s in self.teams.items() if not s.exited and t != sender]
            else:
                recipients = [p.to]
        kind = p.type or "message"
        if event.team is not None:
            self._outside(event, {"action": "message", "to": p.to, "type": kind})
        for recipient in recipients:
            if recipient != sender:
                self._edge(
                    sender,
                    recipient,
                    kind,
                    event,
                    p.summary or "",
                    p.summary_code,
                    p.summary_params,
                )

    def _evaluation(self, event: Event, p: A2AEvaluation) -> None:
        self._outside(
            event,
            {
                "action": "candidate",
                "status": p.status,
                "candidate_id": p.candidate_id,
                "total_est_cycles": p.total_est_cycles,
            },
        )

    def _outside(self, event: Event, action: dict[str, Any]) -> None:
        """An outside agent's team did something over A2A: its last action, with when."""
        team = self._team(event.team or "?")
        if team.external:
            team.last_outside = {**action, "seq": event.seq, "ts": event.ts}

    def _edge(
        self,
        source: str,
        target: str,
        kind: str,
        event: Event,
        summary: str,
        code: str | None = None,
        params: dict[str, str] | None = None,
    ) -> None:
        """Count one more `kind` from source to target; its last summary is kept in English
        and, where the lab wrote it, as a code with values the page translates."""
        edge = self.edges.setdefault(
            (source, target, kind),
            {"source": source, "target": target, "type": kind, "count": 0},
        )
        edge["count"] += 1
        edge["last_seq"], edge["last_ts"] = event.seq, event.ts
        edge["summary"] = summary[:200]
        edge["summary_code"], edge["summary_params"] = code, params

    def _tool_call(self, event: Event, p: ToolCall) -> None:
        """A team that fetched another team's candidate adopts from it: an edge from the
        candidate's team to the fetcher (the only tool call the fold reads)."""
        if p.name != ADOPTION_TOOL or event.team is None:
            return
        try:
            args = json.loads(p.args or "")
        except ValueError:
            return
        candidate_id = args.get("candidate_id") if isinstance(args, dict) else None
        cand = self.candidates.get(candidate_id) if isinstance(candidate_id, str) else None
        owner = cand.get("team") if cand else None
        if owner and owner != event.team:
            said = f"fetched {candidate_id}"
            self._edge(
                owner, event.team, "adoption", event, said, "fetched", {"candidate": candidate_id}
            )

    def _frozen(self, event: Event, p: CandidateFrozen) -> None:
        cand = self.judger.frozen(event, p)
        if event.team is not None:
            self._team(event.team).candidates.append(cand["candidate_id"])
            note, named = f"frozen {cand['candidate_id']}", {"candidate": cand["candidate_id"]}
            self._edge(event.team, JUDGER_NODE, "candidate", event, note, "frozen", named)

    def _official(self, event: Event, p: OfficialResult) -> None:
        result = self.judger.result(event, p)
        if event.team is not None:
            self._team(event.team).official.append(result)

    def _summary(self, _event: Event, p: RunSummary) -> None:
        self.summary = p.to_payload()

    # -- views ------------------------------------------------------------------------------
    def team_list(self) -> list[dict[str, Any]]:
        return [t.summary() for t in sorted(self.teams.values(), key=_team_order)]

    def graph(self) -> dict[str, Any]:
        nodes = [
            {
                "id": t.id,
                "label": t.display_name or t.id,
                "status": t.status,
                "running": t.running,
                "offline": t.offline,
                "external": t.external,
                "best_cycles": t.best_cycles,
            }
            for t in sorted(self.teams.values(), key=_team_order)
            if not t.exited
        ]
        known = {n["id"] for n in nodes}
        exited = {t.id for t in self.teams.values() if t.exited}
        for special in (JUDGER_NODE, LAB_NODE):
            if any(special in (e["source"], e["target"]) for e in self.edges.values()):
                nodes.append({"id": special, "label": special, "status": "idle", "running": False})
                known.add(special)
        if self.candidates and JUDGER_NODE not in known:
            nodes.append(
                {"id": JUDGER_NODE, "label": JUDGER_NODE, "status": "idle", "running": False}
            )
        edges = [
            e
            for e in self.edges.values()
            if e["source"] not in exited and e["target"] not in exited
        ]
        edges.sort(key=lambda e: e.get("last_seq") or 0, reverse=True)
        return {
            "nodes": nodes,
            "edges": edges[:MAX_EDGES],
            "edges_total": len(edges),
            "last_seq": self.last_seq,
        }

    def judger_rows(self) -> list[dict[str, Any]]:
        return self.judger.rows()

    def leaderboard(self) -> list[dict[str, Any]]:
        rows = []
        for team in sorted(self.teams.values(), key=_team_order):
            row = team.summary()
            rows.append(
                {
                    "id": team.id,
                    "display_name": row["display_name"],
                    "offline": team.offline,
                    "exited": team.exited,
                    "best_official_us": row["best_official_us"],
                    "latest_official": row["latest_official"],
                    "best_cycles": team.best_cycles,
                    "best": team.best,
                    "baseline_cycles": team.baseline_cycles,
                }
            )
        return rows

    def series(self) -> list[dict[str, Any]]:
        return [
            {"team": t.id, "label": t.display_name or t.id, "points": t.series}
            for t in sorted(self.teams.values(), key=_team_order)
            if t.series
        ]

    def usage(self) -> dict[str, Any]:
        return {
            "teams": [
                {"team": t.id, "label": t.display_name or t.id, **t.usage.to_dict()}
                for t in sorted(self.teams.values(), key=_team_order)
            ],
            "providers": [
                {"provider": name, **u.to_dict()} for name, u in sorted(self.providers.items())
            ],
            # a team's members on their own models (also counted in their team's row)
            "members": [
                {
                    "team": team,
                    "label": self.teams[team].display_name if team in self.teams else team,
                    "member": role,
                    **u.to_dict(),
                }
                for (team, role), u in sorted(self.members.items())
            ],
            "judger": self.judger_usage.to_dict() if self.judger_usage.calls else None,
        }


def _team_order(team: TeamState) -> tuple[int, str]:
    return (team.registered_seq or 10**12, team.id)


_HANDLERS: dict[str, Any] = {
    "team.registered": RunState._registered,
    "team.turn": RunState._turn,
    "team.turn_end": RunState._turn_end,
    "team.paused": RunState._paused,
    "team.resumed": RunState._resumed,
    "team.exited": RunState._exited,
    "run.dispatch_started": RunState._dispatch_started,
    "run.dispatch_stopped": RunState._dispatch_stopped,
    "run.summary": RunState._summary,
    "provider.paused": RunState._provider_paused,
    "provider.resumed": RunState._provider_resumed,
    "model.response": RunState._model_response,
    "judger.model_review": RunState._model_review,
    "todos.updated": RunState._todos,
    "source.changed": RunState._source,
    "experiment.planned": RunState._planned,
    "experiment.receipt": RunState._receipt,
    "a2a.message": RunState._message,
    "a2a.evaluation": RunState._evaluation,
    "candidate.frozen": RunState._frozen,
    "tool.call": RunState._tool_call,
    "judger.review": lambda s, e, p: s.judger.review(e, p),
    "judger.nomination": lambda s, e, p: s.judger.nomination(e, p),
    "judger.approval": lambda s, e, p: s.judger.approval(e, p),
    "judger.submission": lambda s, e, p: s.judger.submission(e, p),
    "official.result": RunState._official,
    "approval.requested": lambda s, e, p: s.approvals.requested(e, p),
    "approval.decided": lambda s, e, p: s.approvals.decided(e, p),
    "approval.grant_revoked": lambda s, e, p: s.approvals.grant_revoked(e, p),
    "approval.mode_changed": lambda s, e, p: s.approvals.mode_changed(e, p),
}

FOLDED_KINDS = tuple(sorted(_HANDLERS))


async def fold_into(log: EventLog, state: RunState, upto: int) -> RunState:
    """Feed `state` the folded kinds after its last event, up to `upto` inclusive."""
    while state.last_seq < upto:
        page = await log.read(
            state.run_id,
            after=state.last_seq,
            before=upto + 1,
            limit=READ_PAGE,
            kinds=FOLDED_KINDS,
        )
        state.feed_all(page)
        if len(page) < READ_PAGE:
            state.advance(upto)
    return state
