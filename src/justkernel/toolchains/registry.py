"""The toolchains a process can build by id: the one list of backends, and the one cache of
built instances (`Toolchains`).

It sits with the toolchains (not in the worker) so a new backend is added next to the others,
and the worker side and the lab's runtime are consumers of the same cache: a lab builds each
target's toolchain once, lazily, and its evaluator and its local executor share that instance.
Each builder imports its backend lazily: loading one toolchain never pays for the others (CANN
probes, the ascendc-cpu library).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from justkernel.operators import OperatorDefinition, load_operator
from justkernel.toolchains.protocol import Toolchain, ToolchainError


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

DEFAULT_OPERATOR = "confusion_mul_grad"


def open_dir(folder: Path) -> Path:
    """A folder the sandbox uid can traverse (mode 0755), parents o+x: the trusted artefacts
    below it are bound into the sandbox."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    for parent in folder.parents:
        try:
            mode = parent.stat().st_mode
            if mode & 0o001 == 0 and os.access(parent, os.W_OK):
                os.chmod(parent, (mode & 0o7777) | 0o011)
        except OSError:
            break
        if parent == Path("/"):
            break
    return folder


class Toolchains:
    """The toolchains of one process, built once each (their version facts cost a few tool
    calls) with their trusted artefacts under `cache_dir/<id>`. Without a `cache_dir` it holds
    only the instances `add`ed to it (an evaluator's own toolchain)."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.cache_dir = cache_dir
        self._built: dict[tuple[str, str], Toolchain] = {}

    @classmethod
    def holding(cls, toolchain: Toolchain) -> Toolchains:
        """A cache of just `toolchain` (built by its caller)."""
        held = cls(None)
        held.add(toolchain)
        return held

    def add(self, toolchain: Toolchain, operator: str = DEFAULT_OPERATOR) -> Toolchain:
        """Register an instance built elsewhere; the first one of an id stays."""
        return self._built.setdefault((toolchain.id, operator), toolchain)

    def get(self, toolchain_id: str, operator: str = DEFAULT_OPERATOR) -> Toolchain:
        """The instance for `toolchain_id`, built on first use (ToolchainError when the id is
        unknown, its backend cannot be imported here, or this cache builds nothing)."""
        key = (toolchain_id, operator)
        if key not in self._built:
            if toolchain_id not in TOOLCHAINS:
                raise ToolchainError(f"unknown toolchain {toolchain_id!r}")
            if self.cache_dir is None:
                raise ToolchainError(f"toolchain {toolchain_id!r} is not built in this process")
            try:
                built = TOOLCHAINS[toolchain_id](
                    load_operator(operator), open_dir(self.cache_dir / toolchain_id)
                )
            except ImportError as exc:
                raise ToolchainError(f"toolchain {toolchain_id!r} not available: {exc}") from exc
            self._built[key] = built
        return self._built[key]

    def built(self) -> tuple[Toolchain, ...]:
        """The instances built so far (what a local executor can run now)."""
        return tuple(self._built.values())

    def find(self, toolchain_id: str, version: str) -> Toolchain | None:
        """The built instance of exactly this id and version, if any."""
        for toolchain in self._built.values():
            if (toolchain.id, toolchain.version) == (toolchain_id, version):
                return toolchain
        return None
