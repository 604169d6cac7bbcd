"""The skills a team's agent loads, through Deep Agents' own skills loader on a real workspace:
a workspace of the C port gets the C port's engineering workflow and rule review; one of the
Ascend C project gets their Ascend C versions in their place (same names), and both share the
evidence-distillation skill. The Ascend C rule review names every misuse check the harness
reports, so a model can map an `api_misuse` record to its fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from deepagents.middleware.skills import SkillsMiddleware

from justkernel.agents.backend import WorkspaceBackend
from justkernel.agents.skills import is_ascendc_project, skill_sources
from justkernel.app import LabRuntime
from justkernel.operators import OperatorDefinition, load_operator
from justkernel.paths import resources_dir
from justkernel.scheduler.scheduler import SchedulerConfig
from justkernel.teams.workspace import TeamWorkspace
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply

KEY = "sk-ascendc-skills-key-0042"


def _loaded(definition: OperatorDefinition, root: Path) -> dict[str, str]:
    """Skill name -> the workspace path of the SKILL.md the agent would read."""
    ws = TeamWorkspace.create(root, definition)
    middleware = SkillsMiddleware(backend=WorkspaceBackend(ws), sources=skill_sources(definition))
    update = middleware.before_agent({}, None, {})  # type: ignore[arg-type]
    assert update is not None and not update["skills_load_errors"]
    return {s["name"]: s["path"] for s in update["skills_metadata"]}


def test_cpu_workspace_loads_the_c_port_skills(tmp_path: Path) -> None:
    definition = load_operator()
    assert not is_ascendc_project(definition)
    assert _loaded(definition, tmp_path / "ws") == {
        "engineering-workflow": "/skills/engineering-workflow/SKILL.md",
        "evidence-distillation": "/skills/evidence-distillation/SKILL.md",
        "rule-review": "/skills/rule-review/SKILL.md",
    }


def test_ascendc_workspace_loads_the_ascendc_versions(tmp_path: Path) -> None:
    definition = load_operator().ascendc_target()
    assert is_ascendc_project(definition)
    assert _loaded(definition, tmp_path / "ws") == {
        "engineering-workflow": "/skills/ascendc/engineering-workflow/SKILL.md",
        "evidence-distillation": "/skills/evidence-distillation/SKILL.md",
        "rule-review": "/skills/ascendc/rule-review/SKILL.md",
    }


@pytest.mark.parametrize("name", ["engineering-workflow", "rule-review"])
def test_ascendc_skills_cover_the_projects_rules(name: str) -> None:
    text = (resources_dir() / "skills" / "ascendc" / name / "SKILL.md").read_text()
    for topic in ("196,608", "32", "SetBlockDim", "GetBlockIdx", "float32", "SyncAll"):
        assert topic in text, topic
    assert "GET_TILING_DATA" in text or "tiling data" in text.lower()


def test_ascendc_rule_review_names_every_misuse_check() -> None:
    """Every check name the harness can report (`misuse("...")` in the library, and the
    harness's own `gm_raw_access`) has a row in the table."""
    library = resources_dir() / "ascendc_cpu"
    found = set()
    for path in library.rglob("*"):
        if path.suffix in {".h", ".cpp"}:
            text = path.read_text(errors="replace")
            found |= set(re.findall(r'misuse(?:_json)?\("([a-z_0-9]+)"', text))
    assert {"ub_overflow", "pipeline_hazard", "gm_raw_access", "cross_core_race"} <= found
    review = (resources_dir() / "skills" / "ascendc" / "rule-review" / "SKILL.md").read_text()
    rows = set(re.findall(r"^\| `([a-z_0-9]+)` \|", review, flags=re.M))
    assert rows == found


async def test_an_ascendc_team_is_prompted_with_the_ascendc_skills(runtime: LabRuntime) -> None:
    """Through the real harness and scheduler: a team whose workspace is the Ascend C project
    gets the Ascend C skills listed in its system prompt and is told which files are fixed."""
    runtime.lab.secrets.set("scripted_key", KEY)
    async with OpenAIServer(lambda _body: Reply(text="Nothing to try. [done]"), api_key=KEY) as srv:
        runtime.presets["scripted"] = scripted_preset(srv.base_url)
        run = await runtime.lab.runs.create("ascendc skills", meta={"toolchain": "ascendc-cpu"})
        scheduler = runtime.scheduler(run, SchedulerConfig())
        await scheduler.add_team("scripted")
        await scheduler.run(seconds=60)
        system = json.dumps([m for m in srv.chat_bodies[0]["messages"] if m["role"] == "system"])
    assert "/skills/ascendc/engineering-workflow/SKILL.md" in system
    assert "/skills/ascendc/rule-review/SKILL.md" in system
    assert "/skills/evidence-distillation/SKILL.md" in system
    assert "/skills/rule-review/SKILL.md" not in system  # the C port's, replaced
    assert "every other file of the Ascend C project are fixed" in system
