"""Issue 17 point 3: `justkernel demo` on any desktop (Windows and macOS as well as Linux).

The demo is started through `tests/support/posix_blocked.py`, which makes the POSIX-only
modules unimportable to everything but the standard library, and it serves over real HTTP on
127.0.0.1: the page, the demo run and its events. The blocker is shown to refuse such a module
to code outside the stdlib; and no JustKernel module the demo imports uses a POSIX-only `os` or
`signal` name at import time (the scan reads each module's import-time code: module and class
bodies, decorators, default arguments).
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.support import posix_blocked
from tests.support.server import spawn, wait_for_link

BLOCKER = Path(posix_blocked.__file__)
DEMO_PATH = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); import posix_blocked; "
    "posix_blocked.install(); import justkernel.cli.main, justkernel.cli.demo_cmd, "
    "justkernel.web.app, justkernel.web.server, justkernel.web.demo; "
    "print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items() "
    "if n.startswith('justkernel') and getattr(m, '__file__', None))))"
)


def _env(home: Path) -> dict[str, str]:
    return {
        "PATH": str(Path(sys.executable).parent),  # Python only: no gcc, valgrind, bwrap
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "xdg"),
        "PYTHONUNBUFFERED": "1",
    }


def test_the_demo_serves_with_posix_only_modules_blocked(tmp_path: Path) -> None:
    argv = [sys.executable, str(BLOCKER), "demo", "--port", "0", "--speed", "50"]
    process = spawn(argv, _env(tmp_path), cwd=tmp_path)
    output: list[str] = []
    try:
        link = wait_for_link(process, output)
        base = link.split("/auth/bootstrap")[0]
        with httpx.Client(base_url=base, timeout=30, headers={"Origin": base}) as web:
            page = web.get(link, follow_redirects=True)
            assert page.status_code == 200 and "<html" in page.text.lower()
            started = web.post("/api/demo/start")
            assert started.status_code == 200, started.text
            run_id = started.json()["run"]["id"]
            events = web.get(f"/api/runs/{run_id}/events")
            assert events.status_code == 200 and events.json()["events"], events.text
            run = web.get(f"/api/runs/{run_id}")
            assert run.status_code == 200, run.text
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    assert not [line for line in output if "posix_blocked: refused" in line], output


def test_the_blocker_refuses_posix_modules_to_code_outside_the_stdlib() -> None:
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import posix_blocked; "
        "posix_blocked.install(); import subprocess, shutil, tempfile; import fcntl"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script, str(BLOCKER.parent)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 1
    assert "ImportError: fcntl is POSIX-only" in ran.stderr, ran.stderr  # stdlib's own passed


def _import_time(tree: ast.Module) -> Iterator[ast.AST]:
    """The nodes that run when the module is imported: not function bodies."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from node.decorator_list
            yield from node.args.defaults
            yield from (d for d in node.args.kw_defaults if d is not None)
        elif isinstance(node, ast.ClassDef):
            yield from node.decorator_list
            pending.extend(node.body)
        else:
            yield node


def _posix_names(tree: ast.Module) -> list[str]:
    found = []
    for top in _import_time(tree):
        for node in ast.walk(top):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                module, name = node.value.id, node.attr
                if (module == "os" and name in posix_blocked.OS_ONLY) or (
                    module == "signal" and name in posix_blocked.SIGNAL_ONLY
                ):
                    found.append(f"line {node.lineno}: {module}.{name}")
    return found


def test_no_module_the_demo_imports_uses_posix_only_os_or_signal_at_import() -> None:
    listed = subprocess.run(
        [sys.executable, "-c", DEMO_PATH, str(BLOCKER.parent)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    files = json.loads(listed.stdout)
    assert len(files) > 100  # the demo path: the CLI, the web app, the store, ...
    problems = {
        path: names
        for path in files
        if (names := _posix_names(ast.parse(Path(path).read_text(encoding="utf-8"))))
    }
    assert problems == {}
