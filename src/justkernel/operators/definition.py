"""Operator definitions: `operator.toml` parsed into frozen, validated models.

Every other part (toolchains, judger, agents' tools) reads the operator through these models, so a
bad definition must fail loudly at load time, naming the file and the key, not mid-run.
"""

from __future__ import annotations

import tomllib
from fnmatch import fnmatchcase
from functools import cache, lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from justkernel.core.targets import playbook_target
from justkernel.paths import resources_dir

Dtype = Literal["float32", "float16"]
PathAccess = Literal["editable", "forbidden", "read_only"]


class OperatorDefinitionError(ValueError):
    """A definition or case file is missing or malformed; the message names file and key."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class OperatorInfo(_Frozen):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    display_name: str
    version: int = Field(ge=1)
    spec: str
    project: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    dtypes: tuple[Dtype, ...] = Field(min_length=1)


class Attribute(_Frozen):
    name: str
    type: str
    default: Any = None
    doc: str = ""


class PathPolicy(_Frozen):
    """Which project files a team may change; forbidden wins, everything else is read-only."""

    editable: tuple[str, ...]
    forbidden: tuple[str, ...]

    def access(self, relpath: str) -> PathAccess:
        """Classify a project-relative POSIX path; escaping paths count as forbidden."""
        return _access(self.editable, self.forbidden, relpath)


@lru_cache(maxsize=8192)
def _access(editable: tuple[str, ...], forbidden: tuple[str, ...], relpath: str) -> PathAccess:
    """`PathPolicy.access`, remembered: a workspace asks it of every file at every snapshot
    and after every file tool's write, for the same few paths."""
    path = PurePosixPath(relpath)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return "forbidden"
    text = path.as_posix()
    if any(_glob_match(text, pattern) for pattern in forbidden):
        return "forbidden"
    if any(_glob_match(text, pattern) for pattern in editable):
        return "editable"
    return "read_only"


def _glob_match(path: str, pattern: str) -> bool:
    """`dir/**` matches everything below dir; other patterns are fnmatch globs."""
    if pattern.endswith("/**"):
        return path.startswith(pattern[:-2])
    return fnmatchcase(path, pattern)


class PrecisionStandard(_Frozen):
    """CANN-style: an element fails when |out - golden| > atol + rtol * |golden| (or is NaN)."""

    rtol: float = Field(gt=0)
    atol: float = Field(ge=0)
    error_ratio: float = Field(ge=0, lt=1)
    strict_below_elements: int = Field(ge=0)

    def allowed_failures(self, elements: int) -> int:
        """Outputs below the strict size allow no failure; larger ones allow the ratio."""
        if elements < self.strict_below_elements:
            return 0
        return int(self.error_ratio * elements)


class CaseRefs(_Frozen):
    file: str
    local: str
    perf: tuple[str, ...]


class BuildSpec(_Frozen):
    compiler: str
    cflags: tuple[str, ...]
    include_dirs: tuple[str, ...]
    kernel_source: str
    tiling_source: str
    harness_source: str
    ldlibs: tuple[str, ...]
    kernel_entry: str
    tiling_entry: str
    allowed_external_symbols: tuple[str, ...]
    forbidden_sections: tuple[str, ...]


class HarnessExitCodes(_Frozen):
    ok: int
    usage: int
    bad_case: int
    arena: int
    tiling_rejected: int
    output_write: int
    guard_violation: int


class HarnessSpec(_Frozen):
    arena_base: int
    guard_bytes: int
    workspace_cap_bytes: int
    default_flush_bytes: int
    input_files: tuple[str, ...]
    descriptor_file: str
    output_files: tuple[str, ...]
    run_file: str
    exit_codes: HarnessExitCodes


class AscendcTarget(_Frozen):
    """The Ascend C (msopgen) project of the operator, for the `ascendc-cpu` and `cann`
    toolchains: where its template lives and which files the build names. Project paths are
    relative to `project`; editable globs as in `[paths]`, everything else must equal the
    template (the CMakeLists.txt under op_host/ and op_kernel/ are the build's, not the team's:
    msopgen regenerates them, and the `cann` toolchain refuses changed ones)."""

    project: str
    spec: str | None = None  # the team's spec of this project; None: the operator's spec
    kernel_source: str
    host_source: str
    tiling_header: str
    op_type: str = Field(pattern=r"^[A-Z][A-Za-z0-9]*$")
    kernel_entry: str = Field(pattern=r"^[a-z_][a-z0-9_]*$")
    editable: tuple[str, ...] = ("op_host/**", "op_kernel/**")
    forbidden: tuple[str, ...] = ("op_host/CMakeLists.txt", "op_kernel/CMakeLists.txt")

    @property
    def paths(self) -> PathPolicy:
        return PathPolicy(editable=self.editable, forbidden=self.forbidden)


class OperatorDefinition(_Frozen):
    """One operator: what it computes, what teams may edit, how it is built, judged and run."""

    root: Path
    operator: OperatorInfo
    attributes: tuple[Attribute, ...]
    paths: PathPolicy
    precision: dict[Dtype, PrecisionStandard]
    cases: CaseRefs
    build: BuildSpec
    harness: HarnessSpec
    ascendc: AscendcTarget | None = None

    @model_validator(mode="after")
    def _consistent(self) -> OperatorDefinition:
        missing = [d for d in self.operator.dtypes if d not in self.precision]
        if missing:
            raise ValueError(f"precision: no standard for dtypes {missing}")
        if len(self.harness.input_files) != len(self.operator.inputs):
            raise ValueError("harness.input_files: one file per operator input expected")
        if len(self.harness.output_files) != len(self.operator.outputs):
            raise ValueError("harness.output_files: one file per operator output expected")
        return self

    @property
    def name(self) -> str:
        return self.operator.name

    @property
    def spec_path(self) -> Path:
        return self.root / self.operator.spec

    @property
    def project_dir(self) -> Path:
        """The project template a team workspace starts from."""
        return self.root / self.operator.project

    @property
    def cases_file(self) -> Path:
        return self.root / self.cases.file

    def ascendc_target(self) -> OperatorDefinition:
        """This definition seen through its Ascend C project: the template, editable paths and
        the kernel/host sources are the `[ascendc]` section's, so the tree check, snapshot and
        evaluator work on the msopgen project unchanged. Cases, precision and packs stay the
        operator's (the same input packs serve every target)."""
        target = self.ascendc
        if target is None:
            raise OperatorDefinitionError(f"{self.name}: operator.toml has no [ascendc] section")
        operator = self.operator.model_copy(
            update={"project": target.project, "spec": target.spec or self.operator.spec}
        )
        build = self.build.model_copy(
            update={
                "kernel_source": target.kernel_source,
                "tiling_source": target.host_source,
                "harness_source": target.tiling_header,  # no harness in the project; fixed
                "kernel_entry": target.kernel_entry,
                "tiling_entry": target.op_type,
            }
        )
        return self.model_copy(update={"operator": operator, "build": build, "paths": target.paths})

    def for_toolchain(self, toolchain_id: str) -> OperatorDefinition:
        """The view of this operator a toolchain builds: the C port for `cpu`, the Ascend C
        project for `ascendc-cpu` and `cann` (they compile the same msopgen files)."""
        if playbook_target(toolchain_id) == "cpu":
            return self
        return self.ascendc_target()

    def precision_for(self, dtype: str) -> PrecisionStandard:
        try:
            return self.precision[dtype]  # type: ignore[index]
        except KeyError:
            raise OperatorDefinitionError(
                f"{self.name}: no precision standard for {dtype}"
            ) from None


def format_validation_error(source: Path | str, error: ValidationError, prefix: str = "") -> str:
    """One line per problem, each naming the file and the dotted key path."""
    lines = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"])
        key = f"{prefix}.{key}" if prefix and key else prefix or key
        lines.append(f"{source}: {key or '<root>'}: {item['msg']}")
    return "\n".join(lines)


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file, turning I/O and syntax problems into OperatorDefinitionError."""
    return parse_toml(path, read_bytes(path))


def read_bytes(path: Path) -> bytes:
    """A definition file's bytes; a missing file is an OperatorDefinitionError."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise OperatorDefinitionError(f"{path}: file not found") from None


def parse_toml(path: Path, data: bytes) -> dict[str, Any]:
    """Parse the bytes of the TOML file `path` (named in the error of a syntax problem)."""
    try:
        return tomllib.loads(data.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise OperatorDefinitionError(f"{path}: invalid TOML: {exc}") from None


def load_definition(path: Path) -> OperatorDefinition:
    """Load and validate one `operator.toml`, checking that the files it names exist."""
    path = Path(path).resolve()
    data = read_toml(path)
    try:
        definition = OperatorDefinition.model_validate({**data, "root": path.parent})
    except ValidationError as exc:
        raise OperatorDefinitionError(format_validation_error(path, exc)) from None
    checks = {
        "operator.spec": definition.spec_path,
        "operator.project": definition.project_dir,
        "cases.file": definition.cases_file,
    }
    for key, target in checks.items():
        if not target.exists():
            raise OperatorDefinitionError(f"{path}: {key}: {target} does not exist")
    project_files = {
        "build.kernel_source": definition.build.kernel_source,
        "build.tiling_source": definition.build.tiling_source,
        "build.harness_source": definition.build.harness_source,
    }
    for key, rel in project_files.items():
        if not (definition.project_dir / rel).is_file():
            raise OperatorDefinitionError(f"{path}: {key}: {rel} not in the project template")
    if definition.ascendc is not None:
        _check_ascendc(path, definition, definition.ascendc)
    return definition


def _check_ascendc(path: Path, definition: OperatorDefinition, target: AscendcTarget) -> None:
    """The [ascendc] section names a template folder holding the files it names, editable."""
    project = definition.root / target.project
    if not project.is_dir():
        raise OperatorDefinitionError(f"{path}: ascendc.project: {project} does not exist")
    if target.spec is not None and not (definition.root / target.spec).is_file():
        raise OperatorDefinitionError(f"{path}: ascendc.spec: {target.spec} does not exist")
    for key in ("kernel_source", "host_source", "tiling_header"):
        rel = getattr(target, key)
        if not (project / rel).is_file():
            raise OperatorDefinitionError(f"{path}: ascendc.{key}: {rel} not in {project}")
        if target.paths.access(rel) != "editable":
            raise OperatorDefinitionError(f"{path}: ascendc.{key}: {rel} is not editable")


def operators_dir() -> Path:
    return resources_dir() / "operators"


def available_operators() -> tuple[str, ...]:
    """Names of the bundled operators (folders holding an operator.toml)."""
    return tuple(sorted(p.parent.name for p in operators_dir().glob("*/operator.toml")))


@cache
def load_operator(name: str = "confusion_mul_grad") -> OperatorDefinition:
    """The bundled definition of `name`; cached because definitions are immutable."""
    path = operators_dir() / name / "operator.toml"
    if not path.is_file():
        known = ", ".join(available_operators()) or "none"
        raise OperatorDefinitionError(f"unknown operator {name!r} (bundled: {known})")
    return load_definition(path)
