"""Operator definitions: spec, cases, input packs, golden, precision check, build and harness.

The first (and default) operator is ConfusionMulGrad; its data lives in
`resources/operators/confusion_mul_grad/` (operator.toml, cases.toml, spec.md, project/).

Typical pipeline (the toolchain adds sandboxing and cachegrind around the same calls)::

    from justkernel.operators import (
        load_operator, local_cases, perf_cases, ensure_input_pack,
        compile_steps, build_project, run_harness, check_case_outputs,
    )

    op = load_operator()                     # OperatorDefinition (frozen); op.project_dir,
                                             # op.paths.access("op_kernel/x.c") -> "editable"
    cases = local_cases(op)                  # 15 CaseSpec; perf_cases(op) -> 3 CaseSpec
    pack = ensure_input_pack(cases, cache)   # built once per case set under cache/<pack_hash>/
    pack.pack_hash                           # goes into every receipt
    pack.case_dir("c01_row_f32")             # case.txt + input0..2.bin: hand this to the harness
    pack.golden_dir("c01_row_f32")           # output0/1.bin goldens: never mount in a sandbox

    steps = compile_steps(workspace, build)  # CompileStep(name, argv, cwd, output): kernel,
                                             # tiling, harness objects, then link -> build/harness
    static_check(build / "cmg_kernel.o", op.build.kernel_entry)   # () when clean
    result = build_project(workspace, build) # runs the steps natively + static checks

    harness_argv(result.harness, pack.case_dir(cid), out / cid)   # wrap in a sandbox, or:
    run = run_harness(result.harness, pack.case_dir(cid), out / cid)  # run.status: "ok",
                                             # "guard_violation" (exit 86), "timeout", "signal ..."
    check = check_case_outputs(pack, cid, out / cid)  # CaseCheck: passed, per-output
                                             # error_ratio, max_abs/rel_error, first_failures

The harness (`harness <case_dir> <out_dir> [--reps N] [--flush-bytes N]`, out_dir must exist)
writes output0.bin, output1.bin and run.json (kernel ns per repetition) into out_dir. Exit codes
are in `op.harness.exit_codes` (0 ok, 3 bad case, 4 arena, 5 tiling rejected, 86 guard
violation); `exit_status(returncode)` names them. Kernel-only cycle counting: the kernel entry is
`op.build.kernel_entry` (valgrind 3.19 has no cachegrind --toggle-collect; callgrind's has).

`input_pack_hash(cases, cache)` returns a case set's hash without regenerating when cached;
`verify_input_pack(pack)` re-hashes the files; `check_pack_outputs(pack, out)` and
`run_pack(harness, pack, out)` loop over all cases (outputs in out/<case_id>/).
"""

from justkernel.operators.build import (
    BuildResult,
    CompileStep,
    build_project,
    compile_steps,
    static_check,
)
from justkernel.operators.cases import (
    CaseSpec,
    generate_inputs,
    load_case_file,
    local_cases,
    perf_cases,
)
from justkernel.operators.definition import (
    OperatorDefinition,
    OperatorDefinitionError,
    PrecisionStandard,
    available_operators,
    load_definition,
    load_operator,
)
from justkernel.operators.golden import compute_golden, reference
from justkernel.operators.harness import (
    HarnessRun,
    exit_status,
    harness_argv,
    run_harness,
    run_pack,
)
from justkernel.operators.pack import (
    InputPack,
    PackEntry,
    PackError,
    build_input_pack,
    case_set_key,
    ensure_input_pack,
    input_pack_hash,
    load_input_pack,
    verify_input_pack,
)
from justkernel.operators.precision import (
    CaseCheck,
    OutputCheck,
    check_case_outputs,
    check_pack_outputs,
    compare_output,
)
from justkernel.operators.rawfiles import case_descriptor, raw_bytes, read_raw

__all__ = [
    "BuildResult",
    "CaseCheck",
    "CaseSpec",
    "CompileStep",
    "HarnessRun",
    "InputPack",
    "OperatorDefinition",
    "OperatorDefinitionError",
    "OutputCheck",
    "PackEntry",
    "PackError",
    "PrecisionStandard",
    "available_operators",
    "build_input_pack",
    "build_project",
    "case_descriptor",
    "case_set_key",
    "check_case_outputs",
    "check_pack_outputs",
    "compare_output",
    "compile_steps",
    "compute_golden",
    "ensure_input_pack",
    "exit_status",
    "generate_inputs",
    "harness_argv",
    "input_pack_hash",
    "load_case_file",
    "load_definition",
    "load_input_pack",
    "load_operator",
    "local_cases",
    "perf_cases",
    "raw_bytes",
    "read_raw",
    "reference",
    "run_harness",
    "run_pack",
    "static_check",
    "verify_input_pack",
]
