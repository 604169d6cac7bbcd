"""A scripted competent model for the OpenAI-compatible stand-in (`OpenAIServer(handler)`).

It plays what a capable engineer model does on the Ascend C project, deriving every step from
the messages it receives (the tools offered, the tool results), never from a fixed transcript:
it pages through `/spec.md` while the read says there is more, lists the local cases, reads the
three editable files, measures the baseline under a recorded plan, plans the improvement with the
baseline's figures as evidence, writes it, compiles, fixes the line the compiler names, probes
the cases its plan named, runs the full simulation, reads the receipt's cycles, says [done], and
when it is woken reads its inbox until the official result of its candidate is there.

Its "knowledge" is an improvement it knows how to write: a measured overlay of the Ascend C
offline playbook (`resources/playbook/confusion_mul_grad/ascendc/steps/<step>/`). Its first
write carries one realistic slip (a misspelled call), so the walk shows it reacting to a compile
error; a kernel that compiles first time would skip the fix. A `marker` comment makes the kernel
a source no other test submits (the lab never submits a source twice to a judge backend).

The model keeps no progress of its own between requests: `state(messages)` folds the history
into facts and `decide` picks the next step from them, so it follows whatever the lab answers
(a watchdog nudge, a retried call, a woken turn). What it saw is kept in `seen` for the test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.openai_server import Reply, ToolCall, Usage

DONE = "[done]"
KERNEL = "op_kernel/confusion_mul_grad.cpp"
NEXT_OFFSET = re.compile(r"next offset (\d+)")
ERROR_LINE = re.compile(r"(op_kernel/[\w./-]+):(\d+):\d+: (?:fatal )?error")
SLIP = ("DataCopy(", "DataCopyy(")  # the one misspelled call of the first write
WHOLE = 2000  # the read limit for a file it reads whole (a one-line look uses 1)
MAX_COMPILES = 4  # a model that cannot get it to compile gives up, loudly


class ModelGaveUp(AssertionError):
    """The lab answered something the model cannot act on; the message says what."""


@dataclass
class Step:
    """One tool call of the history and what it returned (None while unanswered)."""

    name: str
    args: dict[str, Any]
    result: str | None
    data: Any = None  # the result parsed as JSON, when it is JSON


@dataclass
class State:
    """The facts the history holds, in the order they happened."""

    steps: list[Step] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # the model's own text answers
    new_turn: bool = False  # the last message is a prompt (the lab started or woke a turn)
    done_said_after_work: bool = False


def _text(content: Any) -> str:
    """A message's content as text: a string, or an array of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def state(messages: list[dict[str, Any]]) -> State:
    """Fold the chat history into steps (each call with its result) and text answers."""
    folded = State()
    by_id: dict[str, Step] = {}
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            text = _text(message.get("content"))
            if text:
                folded.texts.append(text)
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                args = _parsed(function.get("arguments") or "{}")
                step = Step(function.get("name", ""), args if isinstance(args, dict) else {}, None)
                folded.steps.append(step)
                by_id[call.get("id", "")] = step
        elif role == "tool":
            step = by_id.get(message.get("tool_call_id", ""))
            if step is not None:
                step.result = _text(message.get("content"))
                step.data = _parsed(step.result)
    last = messages[-1] if messages else {}
    folded.new_turn = last.get("role") == "user"
    return folded


@dataclass
class Seen:
    """What the model saw, for the test's assertions and the walk's report."""

    tools: list[list[str]] = field(default_factory=list)  # offered tool names, per request
    system: list[str] = field(default_factory=list)  # system prompts (text), per request
    prompts: list[str] = field(default_factory=list)  # every distinct user prompt, in order
    compile_errors: list[str] = field(default_factory=list)  # diagnostics it fixed
    decisions: list[str] = field(default_factory=list)  # the step it chose, per request


class CompetentModel:
    """`handler(body) -> Reply` for `OpenAIServer`: the next step from the messages."""

    def __init__(self, overlay: Path, marker: str) -> None:
        self.files = {
            p.relative_to(overlay).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(overlay.rglob("*"))
            if p.is_file()
        }
        assert KERNEL in self.files, f"{overlay} has no {KERNEL}"
        self.files[KERNEL] += f"\n// {marker}\n"
        self.slipped = self.files[KERNEL].replace(*SLIP, 1)
        assert self.slipped != self.files[KERNEL], f"no {SLIP[0]} in the overlay's kernel"
        self.probe_cases: list[str] = []
        self.seen = Seen()

    # -- the handler ------------------------------------------------------------------------
    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        tools = {
            t["function"]["name"]: t["function"].get("parameters", {})
            for t in body.get("tools", [])
            if t.get("type") == "function"
        }
        self.seen.tools.append(sorted(tools))
        self.seen.system.append(
            "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
        )
        for m in messages:
            prompt = _text(m.get("content")) if m.get("role") == "user" else None
            if prompt and prompt not in self.seen.prompts:
                self.seen.prompts.append(prompt)
        reply = self.decide(state(messages), tools)
        prompt_tokens = max(1, len(json.dumps(messages)) // 4)
        reply.usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=60)
        return reply

    def _call(self, tools: dict[str, Any], name: str, **known: Any) -> Reply:
        """A call of the offered tool `name`, its arguments filled from its own schema."""
        if name not in tools:
            raise ModelGaveUp(f"the lab does not offer {name!r} (offered: {sorted(tools)})")
        self.seen.decisions.append(name)
        return Reply(tool_calls=[ToolCall(name, fill_args(tools[name], known))])

    def _say(self, text: str) -> Reply:
        self.seen.decisions.append("text")
        return Reply(text=text)

    # -- the decision -----------------------------------------------------------------------
    def decide(self, s: State, tools: dict[str, Any]) -> Reply:
        steps = [st for st in s.steps if st.result is not None]

        # 1. the spec, page by page while the read says there is more
        spec = [st for st in steps if st.name == "read_file" and _path(st) == "/spec.md"]
        if not spec:
            return self._call(tools, "read_file", file_path="/spec.md")
        more = NEXT_OFFSET.search(spec[-1].result or "")
        if more and not any(_offset(st) == int(more.group(1)) for st in spec):
            return self._call(tools, "read_file", file_path="/spec.md", offset=int(more.group(1)))

        # 2. the local cases (the plan's probe cases come from this list)
        listed = [st for st in steps if st.name == "list_local_cases" and st.data]
        if not listed:
            return self._call(tools, "list_local_cases")
        local = [c["id"] for c in listed[-1].data.get("local", [])]

        # 3. the files it will change, whole (a large limit; paged if the read says more)
        for rel in self.files:
            reads = [
                st
                for st in steps
                if st.name == "read_file" and _path(st) == f"/{rel}" and _limit(st) == WHOLE
            ]
            if not reads:
                return self._call(tools, "read_file", file_path=f"/{rel}", limit=WHOLE)
            more = NEXT_OFFSET.search(reads[-1].result or "")
            if more and not any(_offset(st) == int(more.group(1)) for st in reads):
                return self._call(
                    tools, "read_file", file_path=f"/{rel}", offset=int(more.group(1)), limit=WHOLE
                )

        # 4. the baseline, measured under a plan of its own
        plans = [st for st in steps if st.name == "record_experiment_plan" and _recorded(st)]
        fulls = [st for st in steps if st.name == "simulate_kernel" and _mode(st) == "full"]
        if not plans:
            return self._call(
                tools,
                "record_experiment_plan",
                failure_evidence="no receipt yet: the template has not been measured",
                hypothesis="the one-core template is the baseline every change is judged against",
                change="none: measure the template as it is",
                validation_criterion="all 15 local cases pass and every perf case has cycles",
                case_ids=[c for c in local if c.startswith("c15")][:1] or local[:1],
            )
        if not fulls:
            return self._call(tools, "simulate_kernel", mode="full")
        baseline = fulls[0].data or {}
        if baseline.get("status") != "measured" or not baseline.get("total_est_cycles"):
            raise ModelGaveUp(f"the baseline did not measure: {fulls[0].result}")

        # 5. the improvement, planned with the baseline's figures as evidence
        if len(plans) < 2:
            self.probe_cases = [c for c in PROBES if c in local] or local[:3]
            return self._call(
                tools,
                "record_experiment_plan",
                failure_evidence=_evidence(baseline),
                hypothesis=(
                    "every perf case is MTE2-bound on one core: spreading flat per-block ranges "
                    "over every vector core, splitting column and full reductions into "
                    "workspace partials and sizing UB tiles per dtype moves the same bytes in "
                    "fewer, larger copies on 40 cores"
                ),
                change=(
                    "op_kernel: multi-core flat ranges, split reductions with SyncAll, a UB "
                    "plan per dtype; op_host: the tiling that carries them"
                ),
                validation_criterion=(
                    "the probe cases pass, then all 15 local cases pass with total cycles well "
                    f"below the baseline's {baseline['total_est_cycles']}"
                ),
                case_ids=self.probe_cases,
            )
        plan_at = s.steps.index(plans[1])
        after_plan = [st for st in steps if s.steps.index(st) > plan_at]

        # 6. write every file of the change (the kernel with the slip a hurried hand makes)
        written = {_path(st) for st in after_plan if st.name == "write_file" and _ok(st)}
        for rel, content in self.files.items():
            if f"/{rel}" not in written:
                text = self.slipped if rel == KERNEL else content
                return self._call(tools, "write_file", file_path=f"/{rel}", content=text)

        # 7. compile; on an error, read the line the compiler names and fix it
        compiles = [st for st in after_plan if st.name == "compile_kernel"]
        last_compile = compiles[-1] if compiles else None
        changed_since = last_compile is not None and any(
            st.name in ("write_file", "edit_file") and _ok(st)
            for st in after_plan[after_plan.index(last_compile) + 1 :]
        )
        if last_compile is None or changed_since:
            if len(compiles) >= MAX_COMPILES:
                raise ModelGaveUp(f"{MAX_COMPILES} compiles and still: {last_compile}")
            return self._call(tools, "compile_kernel")
        if not (last_compile.data or {}).get("ok"):
            return self._fix(last_compile, after_plan, tools)

        # 8. probe the cases the plan named
        after_compile = after_plan[after_plan.index(last_compile) + 1 :]
        probes = [
            st for st in after_compile if st.name == "simulate_kernel" and _mode(st) == "probe"
        ]
        if not probes:
            return self._call(tools, "simulate_kernel", mode="probe", case_ids=self.probe_cases)
        if not _all_passed(probes[-1].data):
            raise ModelGaveUp(f"the probe failed: {probes[-1].result}")

        # 9. the full simulation, then the receipt's cycles
        improved = [
            st for st in after_compile if st.name == "simulate_kernel" and _mode(st) == "full"
        ]
        if not improved:
            return self._call(tools, "simulate_kernel", mode="full")
        result = improved[-1].data or {}
        reads = [
            st
            for st in after_compile[after_compile.index(improved[-1]) + 1 :]
            if st.name == "read_simulation_results" and st.data
        ]
        if not reads:
            return self._call(
                tools,
                "read_simulation_results",
                receipt_id=result.get("receipt_id"),
                section="summary",
            )
        receipt = reads[0].data
        cycles = receipt.get("total_est_cycles")
        candidate = result.get("frozen_candidate") or "my candidate"

        # 10. report, then on every new turn read the inbox until the official result is there
        inbox = [st for st in after_compile if st.name == "read_inbox" and st.data is not None]
        official = _official(inbox, candidate, result.get("source_sha256"))
        if not s.new_turn:
            if official is not None and inbox and inbox[-1] is steps[-1]:
                points = official.get("points") or []
                passed = sum(1 for p in points if p.get("passed"))
                return self._say(
                    f"Official result of {official.get('candidate_id')}: "
                    f"{official.get('status')}, {passed}/{len(points)} "
                    f"hidden points pass, prof_sum_us {official.get('prof_sum_us')}. Locally "
                    f"{cycles} cycles against the baseline's {baseline['total_est_cycles']}. "
                    f"Nothing better to try. {DONE}"
                )
            if steps and steps[-1].name in ("read_inbox", "read_simulation_results"):
                return self._say(
                    f"Experiment 2: {receipt.get('status')}, {receipt.get('cases_passed')}/"
                    f"{receipt.get('cases_run')} local cases, {cycles} cycles (baseline "
                    f"{baseline['total_est_cycles']}). Candidate {candidate} is with the Judger; "
                    f"I wait for its official result. {DONE}"
                )
        return self._call(tools, "read_inbox")

    def _fix(self, failed: Step, after_plan: list[Step], tools: dict[str, Any]) -> Reply:
        """Read the line the compiler named, then put the intended text in its place."""
        diagnostics = "\n".join(str(d) for d in (failed.data or {}).get("diagnostics") or [])
        found = ERROR_LINE.search(diagnostics)
        if found is None:
            raise ModelGaveUp(f"a failed compile without an error line: {failed.result}")
        rel, line = found.group(1), int(found.group(2))
        if rel not in self.files:
            raise ModelGaveUp(f"the compiler names {rel}, which it did not write")
        since = after_plan[after_plan.index(failed) + 1 :]
        looked = [
            st
            for st in since
            if st.name == "read_file" and _path(st) == f"/{rel}" and _offset(st) == line - 1
        ]
        if not looked:
            self.seen.compile_errors.append(diagnostics)
            return self._call(tools, "read_file", file_path=f"/{rel}", offset=line - 1, limit=1)
        shown = _body(looked[-1].result or "")
        intended = self.files[rel].split("\n")[line - 1]
        if not shown.strip() or shown == intended:
            raise ModelGaveUp(f"{rel}:{line} reads {shown!r}: nothing to fix there")
        return self._call(
            tools, "edit_file", file_path=f"/{rel}", old_string=shown, new_string=intended
        )


PROBES = ["c11_row_f16", "c12_col_keep_pos_f16", "c13_full_f16", "c14_bcast3d_f16"]


def fill_args(schema: dict[str, Any], known: dict[str, Any]) -> dict[str, Any]:
    """The known arguments the tool's schema names, plus a plain value for any other required
    one (its first enum value, an empty list, a short text): a tool whose schema grew a field
    still gets a valid call."""
    props = schema.get("properties", {})
    args = {k: v for k, v in known.items() if k in props and v is not None}
    for name in schema.get("required", []):
        if name in args:
            continue
        prop = props.get(name, {})
        if "enum" in prop:
            args[name] = prop["enum"][0]
        elif prop.get("type") == "array":
            args[name] = []
        elif prop.get("type") in ("integer", "number"):
            args[name] = 0
        elif prop.get("type") == "boolean":
            args[name] = False
        else:
            args[name] = "see the plan's other fields"
    return args


def _path(step: Step) -> str:
    path = str(step.args.get("file_path") or step.args.get("path") or "")
    return path if path.startswith("/") else f"/{path}"


def _offset(step: Step) -> int:
    return int(step.args.get("offset") or 0)


def _limit(step: Step) -> int:
    return int(step.args.get("limit") or 100)


def _mode(step: Step) -> str:
    return str(step.args.get("mode") or "full")


def _ok(step: Step) -> bool:
    text = (step.result or "").lower()
    return not text.startswith("error") and "cannot" not in text[:200]


def _recorded(step: Step) -> bool:
    return isinstance(step.data, dict) and "experiment" in step.data and "error" not in step.data


def _body(result: str) -> str:
    """The file text of a one-line read: what follows the read's status header."""
    lines = result.split("\n")
    header = next(
        (i for i, x in enumerate(lines) if x.startswith("@@ ") and x.endswith(" @@")), None
    )
    rest = lines[header + 1 :] if header is not None else lines
    return rest[0] if rest else ""


def _evidence(baseline: dict[str, Any]) -> str:
    cycles = baseline.get("cycles") or {}
    per_case = ", ".join(f"{k} {v}" for k, v in cycles.items())
    bound = ""
    pipeline = baseline.get("pipeline")
    if isinstance(pipeline, dict):
        pipes = {k: v.get("bound_pipe") for k, v in pipeline.items() if isinstance(v, dict)}
        bound = f"; bound pipes {pipes}" if any(pipes.values()) else ""
    return (
        f"baseline receipt {baseline.get('receipt_id')}: {baseline.get('total_est_cycles')} "
        f"cycles ({per_case}){bound}"
    )


def _all_passed(data: Any) -> bool:
    """A probe's answer says every case it ran passed."""
    if not isinstance(data, dict):
        return False
    if data.get("status") == "probe_passed":
        return True
    run = data.get("cases_run")
    return bool(run) and data.get("cases_passed") == run and not data.get("failed_cases")


def _official(
    inbox: list[Step], candidate: str | None, source: str | None
) -> dict[str, Any] | None:
    """The official feedback on its candidate among the inbox reads (named by the candidate
    id the full simulation returned, else by the source's hash), or None."""
    for step in inbox:
        for message in (step.data or {}).get("messages", []):
            payload = message.get("payload", message) if isinstance(message, dict) else {}
            if "points" not in payload:
                continue
            if (candidate and payload.get("candidate_id") == candidate) or (
                source and payload.get("source_sha256") == source
            ):
                return payload
    return None
