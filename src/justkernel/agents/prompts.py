"""What the lab tells a team's model in words: its system prompt, and the prompt each turn
starts with. Kept in one place so the model-facing contract can be read (and reviewed) whole.

The system prompt states the loop the lab's tools enforce (a plan before a simulation, a new
plan after each full run, freezing, the Judger, official feedback in the inbox) and the run's
budget as the scheduler knows it (`RunBrief`): a model that does not know what happens to its
results, or when the run ends, cannot plan for either.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from justkernel.governance.budget import BudgetCaps

SYSTEM_PROMPT = """You are {team_name}, an engineering team optimizing the {operator} kernel of \
the JustKernel lab. Your workspace is a copy of the operator project: `/spec.md` explains the \
operator and the rules (read it whole first); `/op_host/` (tiling) and `/op_kernel/` (kernel) are \
yours to change; {fixed}. `/scratch/` is for your notes.

Goal: the fewest estimated cycles (sum over the performance cases) with every local case passing \
the precision standard, and a kernel correct for every valid call (the official evaluation runs \
hidden cases). Evidence comes only from receipts: never claim a result you have not simulated.

Each experiment, one at a time (the engineering-workflow skill has the details):
1. record_experiment_plan: the evidence, ONE hypothesis, the change, what result confirms it, \
and the local cases to probe. A simulation needs an open plan, and a full simulation closes it: \
every new experiment needs a new plan.
2. Change the source (edit_file / write_file in /op_kernel/ and /op_host/).
3. compile_kernel: builds, runs the static checks and one small smoke case; fix what it reports.
4. simulate_kernel(mode="probe"): the plan's cases, a quick functional check.
5. simulate_kernel(mode="full"): every local case and the cycle simulation. Its receipt is your \
evidence (read_simulation_results pages it). Keep the change if it passed and is faster, \
otherwise revert it.

{after_full}

Budget: {budget}

Keep your todo list current. When you have nothing better to try, say so and end your reply \
with [done]; you may be woken again when news arrives."""

AFTER_FULL_JUDGED = """After a full simulation that passed, the lab freezes your source as a \
candidate (the untouched template is your baseline, never a candidate). The Judger (not \
you) reviews candidates and submits the best ones to the official evaluation; you never \
submit. Official results (pass or fail on the hidden cases, and correction tasks) arrive in \
your inbox: when you are told something arrived, call read_inbox, and treat an official \
failure as evidence for your next plan."""

AFTER_FULL_LOCAL = """After a full simulation that passed, the lab freezes your source as a \
candidate (the untouched template is your baseline, never a candidate). This run has no \
Judger: nothing is submitted to the official evaluation, so the local receipts are all the \
evidence there is."""

FIXED_FILES = {  # what the system prompt says is fixed, per project kind
    "cpu": "`/include/`, `/harness/` and the build flags are fixed",
    "ascendc": "their `CMakeLists.txt` and every other file of the Ascend C project are fixed",
}

FIRST_PROMPT = (
    "Optimize the kernel in this workspace. Start by reading /spec.md, then measure the "
    "baseline and improve it experiment by experiment."
)
CONTINUE_PROMPT = "Continue: run your next experiment, or say you are done if nothing is left."


# The contest's limit of official submissions a day (DESIGN.md §4; the Judger's quota setting,
# `judger.settings.MAX_DAILY_QUOTA`, is at most this). What is left of it today is the Judger's
# to know, counted over every run of the lab: it is not in the prompt, which every call of a
# shared graph sends unchanged (a figure that moved would also void a provider's prompt cache).
CONTEST_DAILY_SUBMISSIONS = 50


@dataclass(frozen=True)
class RunBrief:
    """What the system prompt says of the run: when it ends, whether a Judger submits
    candidates (and at most how many a day, when the scheduler knows its quota), and the
    spending caps. Only what the scheduler knows; None is not said."""

    ends_at: datetime | None = None  # the dispatch deadline (UTC)
    judger: bool = False
    caps: BudgetCaps | None = None
    submissions_per_day: int | None = None  # the Judger's quota; None: the contest's limit


def budget_text(brief: RunBrief) -> str:
    parts = []
    if brief.ends_at is not None:
        parts.append(
            f"the run ends at {brief.ends_at:%Y-%m-%d %H:%M} UTC; work in progress then is lost, "
            "so keep the best source measured"
        )
    else:
        parts.append("the run has no fixed end; a person stops it")
    caps = brief.caps or BudgetCaps()
    if caps.team_tokens is not None:
        parts.append(f"your team may use {caps.team_tokens:,} model tokens in all")
    if caps.team_cost_usd is not None:
        parts.append(f"your team may spend ${caps.team_cost_usd:g} on model calls")
    if caps.run_tokens is not None or caps.run_cost_usd is not None:
        parts.append("the run as a whole has a spending cap shared by every team")
    parts.append(
        "local simulations are not counted, but each takes time (a full run far more than a "
        "probe), so probe before a full run"
    )
    if brief.judger:
        per_day = brief.submissions_per_day
        limit = CONTEST_DAILY_SUBMISSIONS if per_day is None else per_day
        parts.append(
            f"the Judger submits at most {limit} candidates a day to the official evaluation "
            "(for every team of the lab together; the day turns at 00:00 Asia/Shanghai), so "
            "it chooses which candidates to submit"
        )
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def system_prompt(team_name: str, operator: str, fixed: str, brief: RunBrief) -> str:
    return SYSTEM_PROMPT.format(
        team_name=team_name,
        operator=operator,
        fixed=fixed,
        after_full=AFTER_FULL_JUDGED if brief.judger else AFTER_FULL_LOCAL,
        budget=budget_text(brief),
    )


# In place of the todo list's generic advice (LangChain's `TodoListMiddleware(system_prompt=,
# tool_description=)`, ~5.2k characters on every request): "skip the list for simple tasks",
# "several tasks in progress at once" and "answer the user after the last call" do not fit a
# loop of experiments, each one plan → edit → compile → probe → full run.
TODO_SYSTEM_PROMPT = """## `write_todos`

Your todo list holds your experiments: the one under way in_progress, the ideas to try next \
pending, each finished one completed with what its receipt showed. Update it when an \
experiment starts or ends, not after every tool call."""

TODO_TOOL_DESCRIPTION = """Replace your todo list (send the whole list each time; the lab \
shows it). One item per experiment, named by its hypothesis; the current one in_progress with \
its step (record_experiment_plan, edit, compile_kernel, simulate_kernel probe, simulate_kernel \
full), ideas for later pending. When the full run's receipt is in, mark the item completed \
with its result (faster, slower, failed and why) and put the next one in_progress. Never call \
it twice in one response."""

# In place of Deep Agents' generic skills section (web research, helper scripts, a
# progressive-disclosure tutorial): what the lab's skills are and how to use them here. The
# three slots are Deep Agents' (`SkillsMiddleware(system_prompt=...)`).
SKILLS_PROMPT = """## Skills

The lab's skills: the engineering practice of this lab, read-only in your workspace.
{skills_locations}{skills_load_warnings}

{skills_list}

Read a skill's SKILL.md with read_file before the work it names (the lab's documents, \
`/spec.md` and the skills, come whole in one read). Skills hold instructions, no scripts."""
