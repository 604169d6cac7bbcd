"""Input packs built in a child process, so the lab process never holds their arrays.

Generating a pack draws every input in float64 and computes the golden in float64: for the
perf cases (4M elements each) that is ~350 MB of arrays at once. Built in the lab process, that
became the lab's peak RSS for the whole run (`bench/teams.py`: the warm-up's pack build was the
peak), and much of it stayed as fragmented heap. The child runs the same `ensure_input_pack`
(same bytes, same pack hash, the same race-safe rename into the cache), then exits; the lab
reads only the manifest. Nothing here runs team code: the child is the lab's own code.

    python -m justkernel.operators.pack_process   < {"cases": [...], "cache_dir": ..., ...}
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from justkernel.operators.cases import CaseSpec
from justkernel.operators.definition import OperatorDefinition
from justkernel.operators.pack import (
    InputPack,
    PackError,
    ensure_input_pack,
    find_input_pack,
    load_input_pack,
)

MAX_ERROR_CHARS = 2000


def ensure_input_pack_apart(
    cases: Iterable[CaseSpec], cache_dir: Path, definition: OperatorDefinition
) -> InputPack:
    """`ensure_input_pack`, with the generation done in a child process (blocking: call it
    from a worker thread). A pack already in the cache is read here without a child."""
    cases = tuple(cases)
    found = find_input_pack(cases, cache_dir, definition)
    if found is not None:
        return found
    request = {
        "cases": [c.model_dump(mode="json") for c in cases],
        "cache_dir": str(cache_dir),
        "definition": definition.model_dump(mode="json"),
    }
    done = subprocess.run(
        [sys.executable, "-m", __name__],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip()[-MAX_ERROR_CHARS:]
        raise PackError(f"building the input pack failed (exit {done.returncode}): {why}")
    return load_input_pack(Path(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    """The child: build the pack the request on stdin names; print its folder."""
    request = json.loads(sys.stdin.read())
    cases = [CaseSpec.model_validate(c) for c in request["cases"]]
    definition = OperatorDefinition.model_validate(request["definition"])
    pack = ensure_input_pack(cases, Path(request["cache_dir"]), definition)
    print(pack.root)


if __name__ == "__main__":
    main()
