"""Rewrite big files through a focused view: libcst's metadata costs seconds per 100 KB, so the
codemod sees only the top-level definitions holding findings (plus every other small top-level
statement, so imports and module names still resolve); the rest is replaced by unique
placeholder comments, which keeps line numbers, and the edit is spliced back into the original.
"""
from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

FOCUS_MIN_CHARS = 32 * 1024
_MARK = "#\u2063hn-hidden-{}\n"


@dataclass
class Focused:
    text: str                  # what the codemod sees
    original: list[str]        # the original lines (keepends)
    hidden: set[int]           # 0-based line indexes replaced by placeholders
    hidden_names: frozenset[str] = frozenset()   # module-level names bound in hidden statements

    def splice(self, after: str) -> str | None:
        """The original with the focused view's edits applied; None if an edit touched a
        placeholder (the caller then falls back to the whole file)."""
        a, b = _lines(self.text), _lines(after)
        out: list[str] = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == "equal":
                out += self.original[i1:i2]
            elif any(i in self.hidden for i in range(i1, i2)):
                return None
            else:
                out += b[j1:j2]
        return "".join(out)


def _lines(text: str) -> list[str]:
    # Only "\n" ends a line for ast and git; str.splitlines would also split on \x0c, \u2028...
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def focus(source: str, lines: set[int]) -> Focused | None:
    """A focused view of ``source`` for findings on ``lines`` (1-based); None when not worth it."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError):
        return None  # the full parse reports the error
    original = _lines(source)
    hidden: set[int] = set()
    names: set[str] = set()
    for node in body:
        big = node.end_lineno - node.lineno > 20 and not any(
            isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(node))
        if not (big or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))):
            continue
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if any(start <= ln <= node.end_lineno for ln in lines):
            continue
        hidden.update(range(start - 1, node.end_lineno))
        names.update(_bound(node))
    if not hidden or original and not original[-1].endswith("\n"):
        return None
    text = "".join(_MARK.format(i) if i in hidden else ln for i, ln in enumerate(original))
    return Focused(text, original, hidden, frozenset(names))


def _bound(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
