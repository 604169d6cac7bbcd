"""The A2A agent executor: a team's four skills, carried out on the lab's own services.

Every A2A task is a view of lab state that lives in the lab database: `submit_candidate` runs
the evaluator and freezes measured sources in the candidate store (where the Judger finds
them), `ask` posts on the board, `inbox` delivers board messages with the task id as the
delivery's call id, and `ack_feedback` acknowledges exactly those deliveries. A task that
delivered official feedback waits in INPUT_REQUIRED until the team acknowledges it, so feedback
is never lost between a delivery and the team reading it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")  # before the SDK loads

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from a2a.helpers import get_data_parts, get_text_parts, new_data_part, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message, TaskState
from google.protobuf.json_format import MessageToDict

from justkernel.a2a.board import BoardError, LabBoard
from justkernel.core.events.collab import A2AEvaluation
from justkernel.core.events.runs import DispatchStarted, DispatchStopped
from justkernel.core.receipts import Receipt
from justkernel.core.relpath import relpath_problem
from justkernel.core.targets import (
    TargetMismatch,
    check_same_target,
    playbook_target,
    run_toolchain,
)
from justkernel.lab import Lab
from justkernel.operators import OperatorDefinition, load_operator
from justkernel.operators.project_files import other_target_owning
from justkernel.store.tokens import TeamIdentity
from justkernel.toolchains.tree import MAX_FILE_BYTES
from justkernel.workers.evaluator import Evaluator

log = logging.getLogger("justkernel.a2a")

SKILLS = ("submit_candidate", "ask", "inbox", "ack_feedback")
POSTS = ("submit_candidate", "ask")  # the skills that put something into the run
IDENTITY_KEY = "justkernel.team"  # where the context builder puts the caller's TeamIdentity
MAX_FILES = 32
MAX_TOTAL_BYTES = 4 * MAX_FILE_BYTES
MAX_QUESTION_CHARS = 4000
# an evaluator, or an async factory of the evaluator of a target (toolchain id)
EvaluatorSource = Evaluator | Callable[[str], Awaitable[Evaluator]]


class SkillError(ValueError):
    """The request cannot be carried out; the message is shown to the calling agent."""


def identity_of(context: RequestContext) -> TeamIdentity:
    identity = context.call_context.state.get(IDENTITY_KEY)
    if not isinstance(identity, TeamIdentity):  # the endpoint's guard always sets it
        raise RuntimeError("A2A request without a team identity")
    return identity


def requested_skill(context: RequestContext) -> str | None:
    """The skill a message asks for: `metadata.skill` of the message or the request, or a
    `skill` field in its first data part."""
    message = context.message
    sources: list[Any] = [MessageToDict(message.metadata) if message else {}, context.metadata]
    sources += get_data_parts(message.parts) if message else []
    for source in sources:
        if isinstance(source, dict) and isinstance(source.get("skill"), str):
            return source["skill"]
    return None


# -- candidate files ------------------------------------------------------------------------
PROJECTS = {"cpu": "C port", "ascendc": "Ascend C"}


def _other_target(rel: str, operator: OperatorDefinition, toolchain_id: str) -> str | None:
    """Why `rel` belongs to the other target's project and not to this run's, or None."""
    other_id = other_target_owning(rel, load_operator(operator.name), toolchain_id)
    if other_id is None:
        return None
    mine = playbook_target(toolchain_id)
    sources = ", ".join(dict.fromkeys((operator.build.kernel_source, operator.build.tiling_source)))
    return (
        f"{rel}: a file of the {PROJECTS[playbook_target(other_id)]} project, but this run's "
        f"target is {toolchain_id} (the {PROJECTS[mine]} project: {sources}, under "
        f"{', '.join(operator.paths.editable)}); a run never mixes targets"
    )


def _check_path(
    rel: Any, operator: OperatorDefinition, toolchain_id: str | None = None
) -> str | None:
    """Why `rel` cannot be a candidate file, or None when it is an editable project path of
    the run's target (`toolchain_id`: a file of the other target's project is refused by name)."""
    if not isinstance(rel, str) or not rel or len(rel) > 200:
        return f"{str(rel)[:80]!r}: not a file path"
    if (problem := relpath_problem(rel)) is not None:
        return f"{rel.encode('unicode_escape').decode()}: {problem}"
    if toolchain_id is not None and (why := _other_target(rel, operator, toolchain_id)):
        return why
    access = operator.paths.access(rel)
    if access == "forbidden":
        return f"{rel}: fixed by the operator; it cannot change"
    if access != "editable":
        return f"{rel}: not editable (editable: {', '.join(operator.paths.editable)})"
    return None


def candidate_files(
    message: Message | None, operator: OperatorDefinition, toolchain_id: str | None = None
) -> dict[str, bytes]:
    """The editable files a submission carries: file parts (raw bytes with a filename) and/or
    data parts `{relpath: text}` (or `{"files": {relpath: text}}`), checked against the run's
    target (`operator` is its view, `toolchain_id` its id). Every problem is reported at once,
    so the agent can fix them in one go."""
    entries: list[tuple[Any, Any]] = []
    problems: list[str] = []
    for part in message.parts if message else []:
        if part.HasField("raw"):
            entries.append((part.filename, part.raw))
        elif part.HasField("url"):
            problems.append(f"{part.filename or part.url[:80]}: send file contents, not a URL")
        elif part.HasField("data"):
            data = MessageToDict(part.data)
            if not isinstance(data, dict):
                problems.append("a data part must be an object {relpath: text}")
                continue
            files = data.get("files", {k: v for k, v in data.items() if k != "skill"})
            if not isinstance(files, dict):
                problems.append('"files" must be an object {relpath: text}')
                continue
            entries += list(files.items())
    files_out: dict[str, bytes] = {}
    for rel, content in entries:
        why = _check_path(rel, operator, toolchain_id)
        if why is None and rel in files_out:
            why = f"{rel}: sent twice"
        if why is None and not isinstance(content, str | bytes):
            why = f"{rel}: the content must be text"
        if why is not None:
            problems.append(why)
            continue
        data = content.encode() if isinstance(content, str) else content
        if len(data) > MAX_FILE_BYTES:
            problems.append(f"{rel}: {len(data)} bytes, larger than {MAX_FILE_BYTES}")
            continue
        files_out[rel] = data
    if not entries and not problems:
        problems.append("no files: send the editable files as file parts or {relpath: text}")
    if len(entries) > MAX_FILES:
        problems.append(f"{len(entries)} files, more than {MAX_FILES}")
    total = sum(len(d) for d in files_out.values())
    if total > MAX_TOTAL_BYTES:
        problems.append(f"{total} bytes in all, more than {MAX_TOTAL_BYTES}")
    if problems:
        raise SkillError("invalid candidate: " + "; ".join(problems))
    return files_out


def _result(receipt: Receipt, candidate_id: str | None) -> dict[str, Any]:
    """What a team needs to decide its next step; the full receipt is its own artifact."""
    return {
        "status": str(receipt.status),
        "detail": receipt.detail,
        "receipt_id": receipt.job_key,
        "source_sha256": receipt.source_sha256,
        "cache_hit": receipt.cache_hit,
        "cases_passed": len([c for c in receipt.cases if c.passed]),
        "cases_run": len([c for c in receipt.cases if c.passed is not None]),
        "failed_cases": receipt.failing_cases()[:20],
        "cycles": {c.case_id: c.est_cycles for c in receipt.cycles},
        "total_est_cycles": receipt.total_est_cycles,
        "candidate_id": candidate_id,
    }


class LabAgentExecutor(AgentExecutor):
    """One executor for every team; the caller's team comes from the call context."""

    def __init__(
        self,
        lab: Lab,
        evaluator: EvaluatorSource,
        board: LabBoard,
        *,
        evaluations_per_team: int = 2,
    ) -> None:
        """`board` is the lab's one board (`app.lab_board`), shared with the scheduler."""
        self.lab = lab
        self._evaluator = evaluator
        self.registry = lab.teams
        self.board = board
        self.candidates = lab.candidates
        self._per_team = evaluations_per_team
        self._slots: dict[TeamIdentity, asyncio.Semaphore] = {}

    async def evaluator(self, toolchain_id: str) -> Evaluator:
        """The evaluator of the run's target; SkillError when this lab has none for it."""
        if isinstance(self._evaluator, Evaluator):
            evaluator = self._evaluator
        else:
            evaluator = await self._evaluator(toolchain_id)
        if evaluator.toolchain.id != toolchain_id:
            raise SkillError(
                f"this run's target is {toolchain_id}; this lab evaluates "
                f"{evaluator.toolchain.id} candidates here"
            )
        return evaluator

    # -- AgentExecutor ----------------------------------------------------------------------
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        identity = identity_of(context)
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        skill = requested_skill(context)
        current = context.current_task
        if current is None:
            task = new_task(
                task_id,
                context_id,
                TaskState.TASK_STATE_SUBMITTED,
                history=[context.message] if context.message else [],
            )
            task.metadata.update({"skill": skill or "", "team": identity.team_id})
            await event_queue.enqueue_event(task)
            await self._run(self._first_step(identity, context, updater, skill), updater)
            return
        started = MessageToDict(current.metadata).get("skill")
        waiting = current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        if started == "inbox" and waiting and skill in (None, "ack_feedback"):
            await self._run(self._ack(identity, task_id, updater), updater)
        else:
            await updater.update_status(
                current.status.state,
                message=self._say(updater, "this task waits for ack_feedback, nothing else"),
            )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancelling stops an evaluation (the evaluator kills its sandboxed job). Feedback
        waiting for its ack is never cancelled: the endpoint's handler refuses that."""
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.cancel()

    # -- plumbing ---------------------------------------------------------------------------
    @staticmethod
    def _say(updater: TaskUpdater, text: str) -> Message:
        return updater.new_agent_message([new_text_part(text)])

    async def _run(self, step: Awaitable[None], updater: TaskUpdater) -> None:
        try:
            await step
        except SkillError as exc:
            await updater.failed(self._say(updater, str(exc)))
        except Exception:  # the lab's fault, not the team's: say so; the details stay in the log
            log.exception("A2A task %s failed", updater.task_id)
            await updater.failed(self._say(updater, "the lab could not do this; retry later"))

    async def _first_step(
        self,
        identity: TeamIdentity,
        context: RequestContext,
        updater: TaskUpdater,
        skill: str | None,
    ) -> None:
        if skill in POSTS:
            await self._refuse_if_stopped(identity.run_id, skill)
        if skill == "submit_candidate":
            await self._submit(identity, context, updater)
        elif skill == "ask":
            await self._ask(identity, context, updater)
        elif skill == "inbox":
            await self._inbox(identity, updater)
        elif skill == "ack_feedback":
            raise SkillError("ack_feedback answers an inbox task: send it with that task's id")
        else:
            raise SkillError(
                f"unknown skill {skill!r}: put one of {', '.join(SKILLS)} in metadata.skill"
            )

    async def _refuse_if_stopped(self, run_id: str, skill: str) -> None:
        """A run whose dispatch stopped (its time limit, Stop, its end) takes nothing more
        from outside: a candidate or a message would land in a run nobody works on. A run
        not yet started, or running, takes them; inbox and ack still work (feedback the
        team is owed can be read)."""
        run = await self.lab.runs.get(run_id)
        if run.read_only or run.mode != "live":
            raise SkillError(f"run {run_id} is a {run.mode} run; it takes no {skill}")
        kinds = (DispatchStarted.KIND, DispatchStopped.KIND)
        latest = await self.lab.events.read(run_id, kinds=kinds, newest_first=True, limit=1)
        if latest and latest[0].kind == DispatchStopped.KIND:
            raise SkillError(
                f"run {run_id} has stopped ({latest[0].payload.get('reason') or 'stopped'}); "
                f"it takes no {skill} until it is resumed"
            )

    # -- submit_candidate -------------------------------------------------------------------
    async def _submit(
        self, identity: TeamIdentity, context: RequestContext, updater: TaskUpdater
    ) -> None:
        run = await self.lab.runs.get(identity.run_id)
        toolchain_id = run_toolchain(run.meta)
        evaluator = await self.evaluator(toolchain_id)
        files = candidate_files(context.message, evaluator.definition, toolchain_id)
        await updater.start_work(self._say(updater, f"evaluating {len(files)} file(s)"))
        slot = self._slots.setdefault(identity, asyncio.Semaphore(self._per_team))
        async with slot:
            receipt, editable = await self._evaluate(evaluator, identity, files)
        try:  # defence in depth: the run's evaluator cannot give another target's receipt
            check_same_target(toolchain_id, receipt.executor.toolchain_id, "the candidate")
        except TargetMismatch as exc:
            raise SkillError(str(exc)) from None
        receipt_json = receipt.model_dump(mode="json")
        blob = self.lab.blobs.put(receipt.model_dump_json(indent=1).encode())
        await updater.add_artifact(
            [new_data_part(receipt_json, media_type="application/json")],
            name="receipt",
            metadata={"receipt_blob": blob},
        )
        candidate_id = None
        if receipt.status == "measured" and receipt.total_est_cycles is not None:
            candidate, _new = await self.candidates.freeze(
                identity.run_id, identity.team_id, editable, receipt, commit=None
            )
            candidate_id = candidate.id
        result = _result(receipt, candidate_id)
        await updater.add_artifact(
            [new_data_part(result, media_type="application/json")], name="result"
        )
        await self.lab.events.append(
            identity.run_id,
            A2AEvaluation(task_id=updater.task_id, **result, blobs=[blob]),
            team=identity.team_id,
            dedup_key=f"a2a.evaluation:{updater.task_id}",
        )
        cycles = receipt.total_est_cycles
        summary = f"{receipt.status}" + (f": {cycles:,} est. cycles" if cycles is not None else "")
        await updater.complete(self._say(updater, summary))

    async def _evaluate(
        self, evaluator: Evaluator, identity: TeamIdentity, files: dict[str, bytes]
    ) -> tuple[Receipt, dict[str, bytes]]:
        """The operator's template with the team's files on top, evaluated in full; also the
        editable files exactly as evaluated, for freezing."""
        operator = evaluator.definition
        with tempfile.TemporaryDirectory(prefix=f"a2a-{identity.team_id}-") as tmp:
            folder = Path(tmp) / "candidate"
            editable = await asyncio.to_thread(_build_candidate, operator, folder, files)
            receipt = await evaluator.evaluate(folder, team=identity.team_id, kind="full")
        return receipt, editable

    # -- ask ----------------------------------------------------------------------------------
    async def _ask(
        self, identity: TeamIdentity, context: RequestContext, updater: TaskUpdater
    ) -> None:
        message = context.message
        assert message is not None
        data = next((d for d in get_data_parts(message.parts) if isinstance(d, dict)), {})
        recipient = data.get("to") or MessageToDict(message.metadata).get("to")
        text = data.get("text") or "\n".join(get_text_parts(message.parts))
        if not isinstance(recipient, str) or not recipient:
            raise SkillError('ask needs "to": a team id or "all"')
        if recipient == identity.team_id:
            raise SkillError("ask another team, or all")
        if not isinstance(text, str) or not text.strip():
            raise SkillError('ask needs a question: a text part or "text"')
        if len(text) > MAX_QUESTION_CHARS:
            raise SkillError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
        try:
            posted, new = await self.board.post(
                identity.run_id,
                sender=identity.team_id,
                sender_message_id=message.message_id,
                recipient=recipient,
                type="message",
                payload={"text": text, "summary": text[:300]},
            )
        except BoardError as exc:
            raise SkillError(str(exc)) from None
        await updater.add_artifact(
            [new_data_part({"message_id": posted.id, "to": recipient, "duplicate": not new})],
            name="posted",
        )
        await updater.complete(self._say(updater, f"posted {posted.id} to {recipient}"))

    # -- inbox and ack_feedback ---------------------------------------------------------------
    async def _inbox(self, identity: TeamIdentity, updater: TaskUpdater) -> None:
        call_id = _call_id(updater.task_id)
        messages = await self.board.deliver(identity.run_id, identity.team_id, call_id)
        for message in messages:
            await updater.add_artifact(
                [new_data_part(message.to_dict(), media_type="application/json")],
                artifact_id=message.id,
                name=message.type,
                metadata={"message_id": message.id, "type": message.type},
            )
        feedback = [m for m in messages if m.type == "feedback"]
        if feedback:
            await updater.requires_input(
                self._say(
                    updater,
                    f"{len(feedback)} official feedback message(s): send ack_feedback on this "
                    "task once you have read them",
                )
            )
            return
        if messages:  # no feedback: the task (kept by the task store) is the receipt
            await self.board.ack(identity.run_id, identity.team_id, [call_id])
        await updater.complete(self._say(updater, f"{len(messages)} new message(s)"))

    async def _ack(self, identity: TeamIdentity, task_id: str, updater: TaskUpdater) -> None:
        acked = await self.board.ack(identity.run_id, identity.team_id, [_call_id(task_id)])
        await updater.add_artifact([new_data_part({"acked": acked})], name="ack")
        await updater.complete(self._say(updater, f"acknowledged {acked} message(s)"))


def _call_id(task_id: str) -> str:
    """The board's delivery call id for an A2A task (apart from agents' tool call ids)."""
    return f"a2a:{task_id}"


def _build_candidate(
    operator: OperatorDefinition, folder: Path, files: dict[str, bytes]
) -> dict[str, bytes]:
    shutil.copytree(operator.project_dir, folder)
    for rel, data in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and operator.paths.access(p.relative_to(folder).as_posix()) == "editable"
    }
