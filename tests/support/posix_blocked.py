"""Run the `justkernel` CLI as it would start on Windows as far as imports go (no tests here).

`python tests/support/posix_blocked.py demo --port 0` makes the POSIX-only modules (resource,
fcntl, pwd, grp, termios, ...) unimportable for everything but the standard library itself
(whose own modules pick their platform's path, as `subprocess` does), for `import` statements
(cached module or not) and `importlib.import_module` alike. Each refusal is printed to stderr
with the module that asked. POSIX-only functions of `os` and `signal` cannot be taken away the
same way (libraries that choose by `sys.platform`, numpy say, would fail where Windows never
runs that line): `OS_ONLY` and `SIGNAL_ONLY` name them for the test's scan of our own modules.
It imports nothing from the tests: it runs as a script in the child's own working folder.
"""

from __future__ import annotations

import builtins
import importlib.abc
import sys
import sysconfig
from collections.abc import Sequence
from types import ModuleType
from typing import Any

BLOCKED = frozenset(
    {"resource", "fcntl", "pwd", "grp", "termios", "pty", "tty", "crypt", "spwd", "syslog"}
    | {"posix", "_posixsubprocess", "_posixshmem", "readline", "nis", "ossaudiodev", "_curses"}
)
# names Windows' os and signal modules do not have (what our modules must not use at import)
OS_ONLY = ("getuid", "geteuid", "getgid", "getegid", "getgroups", "killpg", "setsid", "getpgid")
OS_ONLY += ("getloadavg", "sched_getaffinity", "sysconf", "uname", "setpgid", "getpgrp", "nice")
SIGNAL_ONLY = ("SIGKILL", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGQUIT", "SIGALRM", "SIGPIPE")
SIGNAL_ONLY += ("SIGCHLD", "SIGSTOP", "SIGCONT", "SIGXCPU", "setitimer", "alarm")
_SELF = __file__  # module globals are cleared at shutdown, while imports still happen
STDLIB = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})
_import = builtins.__import__


def _refused(name: str, asker: str) -> ImportError:
    print(f"posix_blocked: refused {name} to {asker}", file=sys.stderr, flush=True)
    return ImportError(f"{name} is POSIX-only (blocked: Windows has no {name})")


def _blocked(name: str, asker: str | None) -> bool:
    return name.split(".")[0] in BLOCKED and not (asker or "").startswith(STDLIB)


def guarded_import(
    name: str,
    globals: dict[str, Any] | None = None,
    locals: dict[str, Any] | None = None,
    fromlist: Sequence[str] = (),
    level: int = 0,
) -> ModuleType:
    """Every `import` statement, cached module or not: refused when a non-stdlib module asks."""
    asker = (globals or {}).get("__file__")
    if level == 0 and _blocked(name, asker):
        raise _refused(name, str(asker))
    return _import(name, globals, locals, fromlist, level)


class Finder(importlib.abc.MetaPathFinder):
    """`importlib.import_module` of a module not yet loaded, from outside the stdlib."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        frame = sys._getframe(1)  # the asker: the first frame not of importlib or this file
        while frame is not None and (
            frame.f_code.co_filename.startswith("<frozen") or frame.f_code.co_filename == _SELF
        ):
            frame = frame.f_back
        asker = frame.f_code.co_filename if frame is not None else None
        if asker is not None and _blocked(name, asker):
            raise _refused(name, asker)
        return None


def install() -> None:
    for name in [m for m in sys.modules if m.split(".")[0] in BLOCKED]:
        del sys.modules[name]  # loaded by the interpreter's start-up: asked for again
    builtins.__import__ = guarded_import
    sys.meta_path.insert(0, Finder())


if __name__ == "__main__":
    install()
    from justkernel.cli.main import app

    sys.argv = ["justkernel", *sys.argv[1:]]
    app()
