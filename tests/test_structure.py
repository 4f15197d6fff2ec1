"""Size limits of docs/architecture.md, checked on the source: in ``audits/`` and ``patches/``
no module over 500 lines, no function over 60 lines or with more than 8 parameters (a dataclass
of options instead). Complexity (mccabe <= 15) and import order are ruff's (pyproject.toml)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("audits", "patches")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 8


def _sources() -> list[Path]:
    return sorted(p for pkg in CHECKED for p in (ROOT / pkg).rglob("*.py"))


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    if names and names[0].arg in ("self", "cls"):
        names = names[1:]
    return len(names) + (a.vararg is not None) + (a.kwarg is not None)


def oversized(source: str) -> list[str]:
    """One line per function of ``source`` over the limits: "name: N lines" / "name: N params"."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                out.append(f"{node.name} (line {node.lineno}): {length} lines")
            if _params(node) > MAX_PARAMETERS:
                out.append(f"{node.name} (line {node.lineno}): {_params(node)} parameters")
    return out


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_and_function_sizes(path: Path):
    source = path.read_text(encoding="utf-8")
    lines = source.count("\n")
    assert lines <= MAX_MODULE_LINES, f"{lines} lines (limit {MAX_MODULE_LINES}): split it"
    assert oversized(source) == [], "split these functions: " + "; ".join(oversized(source))


def test_the_checker_sees_what_it_checks():
    long_body = "\n".join("    x = 1" for _ in range(MAX_FUNCTION_LINES))
    assert oversized(f"def f():\n{long_body}\n") == ["f (line 1): 61 lines"]
    assert oversized("def g(self, a, b, c, d, e, f, g, h): pass\n") == []
    assert oversized("def g(a, b, c, d, e, f, g, h, *rest): pass\n") == ["g (line 1): 9 parameters"]
