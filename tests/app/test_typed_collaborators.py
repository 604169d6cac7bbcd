"""Issue 13: no collaborator typed `Any` in the composition root, the dashboard's run
controller and the Judger's assembly. A parameter, return or attribute annotated bare `Any`
hides an import cycle; data (`dict[str, Any]`) is not a collaborator and is allowed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src/justkernel"
CHECKED = [
    *sorted((SRC / "app").glob("*.py")),
    SRC / "web/control.py",
    SRC / "judger/session.py",
]


def _bare_any(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        annotations: list[tuple[str, ast.expr | None]] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            args += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
            annotations += [(f"{node.name}({a.arg})", a.annotation) for a in args]
            annotations.append((f"{node.name} -> ", node.returns))
        elif isinstance(node, ast.AnnAssign):
            annotations.append((ast.unparse(node.target), node.annotation))
        for where, annotation in annotations:
            if annotation is not None and ast.unparse(annotation) in {"Any", "'Any'"}:
                found.append(f"line {annotation.lineno}: {where}")
    return found


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: p.relative_to(SRC).as_posix())
def test_no_collaborator_is_typed_any(path: Path) -> None:
    assert _bare_any(ast.parse(path.read_text())) == []


def test_the_check_sees_a_collaborator_typed_any() -> None:
    code = "class C:\n    judger: Any = None\n    def run(self, scheduler: Any) -> Any: ...\n"
    assert len(_bare_any(ast.parse(code))) == 3
