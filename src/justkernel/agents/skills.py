"""Which skills a team's agent loads: the common ones, and for an Ascend C workspace the Ascend C
versions on top.

The workspace holds a copy of `resources/skills` (`teams.workspace`). Skills of the C port (the
`cpu` toolchain's project) sit at its top; the Ascend C project's versions of the same skills sit
in `ascendc/` under the same names. Deep Agents loads sources in order and a later skill of the
same name replaces an earlier one, so an Ascend C team sees the Ascend C engineering workflow and
rule review, and both targets share the skills that have one version (evidence distillation).
"""

from __future__ import annotations

from justkernel.operators import OperatorDefinition
from justkernel.teams.workspace import SKILLS_DIR

ASCENDC_SKILLS = "ascendc"  # the subfolder of resources/skills with the Ascend C versions


def is_ascendc_project(definition: OperatorDefinition) -> bool:
    """Is this the operator seen through its Ascend C project (`ascendc_target()`: the
    `ascendc-cpu` and `cann` toolchains' view), rather than the C port's?"""
    target = definition.ascendc
    return target is not None and definition.operator.project == target.project


def skill_sources(definition: OperatorDefinition) -> list[tuple[str, str]]:
    """Deep Agents skill sources (workspace path, label), later ones overriding earlier ones;
    the label names the source in the system prompt ("Lab Skills", "Ascend C Skills")."""
    common = f"/{SKILLS_DIR}/"
    if is_ascendc_project(definition):
        return [(common, "Lab"), (f"{common}{ASCENDC_SKILLS}/", "Ascend C")]
    return [(common, "Lab")]
