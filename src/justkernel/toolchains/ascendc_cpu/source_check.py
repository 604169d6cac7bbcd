"""What a team's Ascend C source may not say, so it cannot tamper with the cycle model.

The kernel runs in the same process as the library that times it: the engine (namespace `jk`,
reached through `jk::g_engine`) holds the pipe clocks, the misuse record and the trace. A
kernel that names the engine could rewind a clock or clear a misuse, so user source may not
name the library's internals at all:

- identifiers `jk`, `g_engine`, and any `jk_` / `JK_` name (except `JK_OP_TYPE`, the macro the
  build defines for GET_TILING_DATA);
- `asm` / `__asm__` (a symbol alias, `int* p asm("_ZN2jk8g_engineE")`, or raw instructions);
- `##` token pasting (`j##k` would build a forbidden name the scan never sees);
- `#define` / `#undef` of a C++ keyword (`#define private public` opens the library's state);
- attributes that alias symbols or run code outside the kernel (alias, weakref, ifunc,
  constructor, destructor, init_priority, section);
- `#include` of the library's internal headers (`jk_ascendc/...`) or of an absolute path.

The scan reads every editable file (comments and string literals removed), so a macro the
team defines is checked where it is written; library macros that expand to `jk::` names on a
user's line (GET_TILING_DATA, OP_ADD) are not user text and are not refused. The preprocessed
unit (`-save-temps`) is checked again for `asm` on the lines whose line marker names a team
file. This is a filter, not a proof: see docs/security.md ("ascendc-cpu: the cycle model").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path


def _words(text: str) -> list[str]:
    return text.split()


MAX_PROBLEMS = 20
_TOKENS = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>R"(?P<delim>[^(\s]{0,16})\(.*?\)(?P=delim)")
  | (?P<string>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
  | (?P<char>(?:u8|[uUL])?'(?:\\.|[^'\\\n])*')
  | (?P<include>^[ \t]*\#[ \t]*include\b[^\n]*)
  | (?P<paste>\#\#|%:%:)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<newline>\n)
    """,
    re.VERBOSE | re.DOTALL | re.MULTILINE,
)
_INTERNAL = re.compile(r"^(jk|g_engine|_*jk_\w*|_*JK_\w*)$")
ALLOWED_INTERNAL = frozenset({"JK_OP_TYPE"})
_ASM = frozenset({"asm", "__asm", "__asm__"})
_BAD_ATTRIBUTES = frozenset(
    {"alias", "weakref", "ifunc", "constructor", "destructor", "init_priority", "section"}
)
KEYWORDS = frozenset(
    _words(
        """alignas alignof and asm auto bool break case catch char class const constexpr
    const_cast continue decltype default delete do double dynamic_cast else enum explicit export
    extern false float for friend goto if inline int long mutable namespace new noexcept not
    nullptr operator or private protected public register reinterpret_cast return short signed
    sizeof static static_assert static_cast struct switch template this thread_local throw true
    try typedef typeid typename union unsigned using virtual void volatile wchar_t while"""
    )
)
_DEFINE = re.compile(r"(?:#|%:)\s*(?:define|undef)\s+([A-Za-z_]\w*)")
_INCLUDE = re.compile(r"#\s*include\s*[<\"]([^>\"]*)[>\"]")
_LINE_MARKER = re.compile(r'^# \d+ "([^"]*)"')


def _attribute_names(text: str, start: int) -> list[str]:
    """Identifiers inside the balanced parentheses that follow `__attribute__` or `[[`."""
    depth, i, opened = 0, start, False
    close = {"(": ")", "[": "]"}
    stack: list[str] = []
    while i < len(text):
        ch = text[i]
        if ch in close:
            stack.append(close[ch])
            depth += 1
            opened = True
        elif stack and ch == stack[-1]:
            stack.pop()
            depth -= 1
            if opened and depth == 0:
                break
        elif not opened and not ch.isspace():
            return []
        i += 1
    return re.findall(r"[A-Za-z_]\w*", text[start:i])


def scan_text(name: str, text: str) -> list[str]:
    """Problems in one team source file, each naming file:line."""
    # Line splices go first, as in the compiler's own phase 2: `j\<newline>k` is `jk`.
    text = text.replace("\\\r\n", "\\\n").replace("\\\n", "")
    problems: list[str] = []
    for number, source in enumerate(_strip(text).splitlines(), 1):
        if _DEFINE.match(source.lstrip()):
            problems += _directive(f"{name}:{number}", source)
    line = 1
    for m in _TOKENS.finditer(text):
        kind = m.lastgroup if m.lastgroup != "delim" else "raw"
        token = m.group(0)
        where = f"{name}:{line}"
        line += token.count("\n")
        if kind in ("comment", "raw", "string", "char", "newline"):
            continue
        if kind == "include":
            problems += _directive(where, token)
        elif kind == "paste":
            problems.append(f"{where}: token pasting (##) is not allowed in team sources")
        elif kind == "ident":
            problems += _identifier(where, token, text, m.end())
        if len(problems) >= MAX_PROBLEMS:
            break
    return problems


def _directive(where: str, token: str) -> list[str]:
    d = _DEFINE.search(token)
    if d and d.group(1) in KEYWORDS:
        return [f"{where}: redefining the keyword `{d.group(1)}` is not allowed"]
    inc = _INCLUDE.search(token)
    if inc:
        path = inc.group(1)
        if path.startswith("/") or "jk_ascendc" in path.split("/"):
            return [f"{where}: #include <{path}>: only the public Ascend C headers may be used"]
    return []


def _identifier(where: str, token: str, text: str, end: int) -> list[str]:
    if token in _ASM:
        return [f"{where}: `{token}` is not allowed (inline assembly or a symbol alias)"]
    if _INTERNAL.match(token) and token not in ALLOWED_INTERNAL:
        return [
            f"{where}: `{token}` names the ascendc-cpu library's internals "
            "(the cycle model); use the Ascend C API only"
        ]
    if token in ("__attribute__", "__attribute") or token == "__declspec":
        bad = sorted({n.strip("_") for n in _attribute_names(text, end)} & _BAD_ATTRIBUTES)
        if bad:
            return [f"{where}: attribute `{bad[0]}` is not allowed in team sources"]
    return []


def _std_attributes(name: str, text: str) -> list[str]:
    """[[gnu::alias(...)]]-style attributes."""
    problems = []
    for m in re.finditer(r"\[\[(.*?)\]\]", text, re.DOTALL):
        names = {n.strip("_") for n in re.findall(r"[A-Za-z_]\w*", m.group(1))}
        bad = sorted(names & _BAD_ATTRIBUTES)
        if bad:
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{name}:{line}: attribute `{bad[0]}` is not allowed in team sources")
    return problems


def scan_sources(root: Path, editable: Iterable[str]) -> tuple[str, ...]:
    """Every problem in the team's editable files (read from the checked snapshot)."""
    problems: list[str] = []
    for rel in sorted(editable):
        text = (root / rel).read_bytes().decode("utf-8", "replace")
        problems += scan_text(rel, text) + _std_attributes(rel, _strip(text))
    return tuple(problems[:MAX_PROBLEMS])


def _strip(text: str) -> str:
    """Comments and literals blanked (newlines kept), for the attribute scan."""

    def blank(m: re.Match[str]) -> str:
        if m.lastgroup in ("comment", "raw", "delim", "string", "char"):
            return re.sub(r"[^\n]", " ", m.group(0))
        return m.group(0)

    return _TOKENS.sub(blank, text)


def user_lines(preprocessed: str, user_dirs: tuple[str, ...]) -> Iterable[tuple[str, str]]:
    """(file:line, text) of the preprocessed lines that come from a team file."""
    current, number, mine = "", 0, False
    for raw in preprocessed.splitlines():
        marker = _LINE_MARKER.match(raw)
        if marker:
            current = marker.group(1)
            number = int(raw.split()[1])
            mine = current.startswith(user_dirs)
            continue
        if mine and raw.strip():
            yield f"{current}:{number}", raw
        number += 1


def scan_preprocessed(
    units: Mapping[str, str], user_dirs: tuple[str, ...] = ("op_host/", "op_kernel/")
) -> tuple[str, ...]:
    """`asm` on a team line of a preprocessed unit (name -> .ii text)."""
    problems: list[str] = []
    for text in units.values():
        for where, line in user_lines(text, user_dirs):
            clean = _strip(line)
            found = set(re.findall(r"[A-Za-z_]\w*", clean)) & _ASM
            if found:
                problems.append(f"{where}: `{sorted(found)[0]}` is not allowed (inline assembly)")
            if len(problems) >= MAX_PROBLEMS:
                return tuple(problems)
    return tuple(problems)
