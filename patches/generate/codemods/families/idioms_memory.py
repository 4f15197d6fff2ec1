"""Memory reporting (HN301): ``torch.cuda.max_memory_allocated()/1e9`` in a log ->
``torch.accelerator.max_memory_allocated()``, with the catalogue's ``guard: true`` honoured
where the value is read.

Without an accelerator ``torch.cuda``'s counters answer 0 (``memory_stats()`` an empty dict),
while ``torch.accelerator``'s raise: a script that logs its peak memory would stop running on
a CPU-only machine. So a counter whose value is used becomes
``(torch.accelerator.<name>(...) if torch.accelerator.is_available() else 0)``: the same call
on CUDA, the same 0 without one. Statements whose value is unused (``reset_peak_memory_stats()``)
and the ``accelerator_api`` target (its counters answer 0 on CPU) are the plain rename.
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

from patches.generate.codemods.families.call_rename import CallRename

_NAMES = (
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "reset_accumulated_memory_stats",
)
_EMPTY = {"memory_stats": "{}"}  # what torch.cuda answers without CUDA; the rest: 0


class GuardedMemory(CallRename):
    name = "memory"
    claims = tuple(f"torch.cuda.{n}" for n in _NAMES) + tuple(
        f"torch.cuda.memory.{n}" for n in _NAMES
    )

    def on_call(self, eng, original, updated):
        new = super().on_call(eng, original, updated)
        if not isinstance(new, cst.Call) or new is updated:
            return new
        name = _dotted(new.func)
        last = name.rsplit(".", 1)[-1]
        if not name.startswith("torch.accelerator.") or last.startswith("reset_"):
            return new
        if isinstance(eng.parent(original), cst.Expr):
            return new  # a statement: its value is not read
        if eng.line(original) in _checked_lines(eng.ctx.tree):
            return new  # already under an `if ...is_available():`
        return cst.IfExp(
            test=cst.parse_expression("torch.accelerator.is_available()"),
            body=new,
            orelse=cst.parse_expression(_EMPTY.get(last, "0")),
            lpar=[cst.LeftParen()],
            rpar=[cst.RightParen()],
        )


def _dotted(node) -> str:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
    return ".".join(reversed(parts))


@functools.lru_cache(maxsize=16)
def _checked_lines(tree: ast.Module) -> frozenset[int]:
    """Lines of the statements under an ``if`` whose test asks ``...is_available()``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and any(
            isinstance(x, ast.Attribute) and x.attr == "is_available" for x in ast.walk(node.test)
        ):
            for stmt in node.body:
                out.update(range(stmt.lineno, stmt.end_lineno + 1))
    return frozenset(out)
