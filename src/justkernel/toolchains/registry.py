"""The toolchains a worker can build by id: the one list of backends.

It sits with the toolchains (not in the worker) so a new backend is added next to the others,
and the worker side stays a consumer. Each builder imports its backend lazily: loading one
toolchain never pays for the others (CANN probes, the ascendc-cpu library).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from justkernel.operators import OperatorDefinition
from justkernel.toolchains.protocol import Toolchain


def _cpu(definition: OperatorDefinition, cache_dir: Path) -> Toolchain:
    from justkernel.toolchains.cpu import CpuToolchain

    return CpuToolchain(definition, cache_dir=cache_dir)


def _ascendc_cpu(definition: OperatorDefinition, cache_dir: Path) -> Toolchain:
    from justkernel.toolchains.ascendc_cpu import AscendcCpuToolchain

    return AscendcCpuToolchain(definition, cache_dir=cache_dir)


def _cann(definition: OperatorDefinition, cache_dir: Path) -> Toolchain:
    from justkernel.toolchains.cann import CannToolchain  # its defaults: SoC, simulator mode

    return CannToolchain(definition=definition)


# Toolchains a worker can build by id (each import is the toolchain's own cost).
TOOLCHAINS: dict[str, Callable[[OperatorDefinition, Path], Toolchain]] = {
    "cpu": _cpu,
    "ascendc-cpu": _ascendc_cpu,
    "cann": _cann,
}
