"""Toolchains: how one candidate is built, checked and measured.

`protocol` holds the interface every backend implements (`Toolchain`; the job spec and the
receipt it returns are `core` records), `tree` the source tree policy every backend checks,
`registry` the backends a worker builds by id. One package per backend: `cpu/` (gcc +
callgrind), `ascendc_cpu/` (the contest's Ascend C project on a clean-room library), `cann/`
(the vendor toolkit), all inside the bubblewrap sandbox of `sandbox/`. Typical use goes through
`justkernel.workers.evaluator.Evaluator`; direct use::

    tc = CpuToolchain()
    spec = JobSpec(operator="confusion_mul_grad", kind="probe", case_ids=("c01_row_f32",),
                   source_tree_hash=check_tree(src, tc.definition).tree_hash,
                   input_packs={"local": pack.pack_hash}, toolchain_id=tc.id,
                   toolchain_version=tc.version)
    receipt = await tc.run(spec, src, {"local": pack}, workdir, slot=0)
"""

from justkernel.core.jobs import LOCAL_PACK, PERF_PACK, JobSpec
from justkernel.toolchains.cpu import CpuLimits, CpuToolchain
from justkernel.toolchains.protocol import Toolchain, ToolchainError
from justkernel.toolchains.tree import CandidateError, TreeCheck, check_tree, snapshot_tree

__all__ = [
    "LOCAL_PACK",
    "PERF_PACK",
    "CandidateError",
    "CpuLimits",
    "CpuToolchain",
    "JobSpec",
    "Toolchain",
    "ToolchainError",
    "TreeCheck",
    "check_tree",
    "snapshot_tree",
]
