"""Which target's project a file belongs to: one answer for every door a candidate comes in
by (the judge's upload, an outside team's A2A submission).

Both projects keep their sources under `op_host/` and `op_kernel/`, so a C port kernel sent as
Ascend C (or the reverse) passes the editable-path check; the build would then ignore it and
measure the template instead. Naming the other project's files refuses that up front."""

from __future__ import annotations

import functools
from pathlib import Path

from justkernel.core.targets import TOOLCHAIN_IDS, playbook_target
from justkernel.operators.definition import OperatorDefinition, OperatorDefinitionError


@functools.cache
def template_files(project_dir: Path) -> frozenset[str]:
    """Every file of a project template (relative POSIX paths); templates do not change."""
    return frozenset(
        p.relative_to(project_dir).as_posix() for p in project_dir.rglob("*") if p.is_file()
    )


def project_files(view: OperatorDefinition) -> frozenset[str]:
    """The files that make a project what it is: its template's and the sources its build
    names."""
    named = {view.build.kernel_source, view.build.tiling_source, view.build.harness_source}
    return template_files(view.project_dir) | named


def other_target_owning(rel: str, operator: OperatorDefinition, toolchain_id: str) -> str | None:
    """The toolchain id of another target whose project holds `rel` while `toolchain_id`'s
    does not, or None. `operator` is the definition as loaded (not a target's view)."""
    if toolchain_id not in TOOLCHAIN_IDS:
        return None
    try:
        own = project_files(operator.for_toolchain(toolchain_id))
    except (OperatorDefinitionError, ValueError):
        return None
    if rel in own:
        return None
    for other_id in TOOLCHAIN_IDS:
        if playbook_target(other_id) == playbook_target(toolchain_id):
            continue
        try:
            other = operator.for_toolchain(other_id)
        except (OperatorDefinitionError, ValueError):
            continue  # the operator has no such project: nothing of it to confuse
        if rel in project_files(other):
            return other_id
    return None


def template_sources(operator: OperatorDefinition) -> dict[str, bytes]:
    """The template's editable files (relative path -> bytes), as a freeze holds a source.
    Read each time: an official-template import may rewrite the template while a lab runs."""
    root = operator.project_dir
    return {
        rel: path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and not path.is_symlink()
        and operator.paths.access(rel := path.relative_to(root).as_posix()) == "editable"
    }


def is_untouched_template(files: dict[str, bytes], operator: OperatorDefinition) -> bool:
    """Are these editable files exactly the template's (the baseline, nothing of a team's)?"""
    return files == template_sources(operator)
