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

from patches.generate.codemods.engine import dotted_name
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
        name = dotted_name(new.func) or ""
        last = name.rsplit(".", 1)[-1]
        if not name.startswith("torch.accelerator.") or last.startswith("reset_"):
            return new
        if isinstance(eng.parent(original), cst.Expr):
            return new  # a statement: its value is not read
        if eng.line(original) in _checked_lines(eng.ctx.tree) or _guarded_here(eng, original):
            return new  # already under an `if ...is_available():`: no second guard
        return cst.IfExp(
            test=cst.parse_expression("torch.accelerator.is_available()"),
            body=new,
            orelse=cst.parse_expression(_EMPTY.get(last, "0")),
            lpar=[cst.LeftParen()],
            rpar=[cst.RightParen()],
        )


def _asks(test) -> bool:
    return any(isinstance(x, ast.Attribute) and x.attr == "is_available" for x in ast.walk(test))


def _negated(test) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _asks(test.operand)


def _lines(stmts) -> set[int]:
    return {n for s in stmts for n in range(s.lineno, s.end_lineno + 1)}


@functools.lru_cache(maxsize=16)
def _checked_lines(tree: ast.Module) -> frozenset[int]:
    """Lines only reached with an accelerator: the body of ``if ...is_available():``, the
    ``else`` of ``if not ...is_available():``, and the rest of a block after
    ``if not ...is_available(): return`` (or raise, continue, break)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _negated(node.test):
            out |= _lines(node.orelse)
        elif isinstance(node, ast.If) and _asks(node.test):
            out |= _lines(node.body)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if (
                    isinstance(stmt, ast.If)
                    and _negated(stmt.test)
                    and not stmt.orelse
                    and isinstance(stmt.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
                ):
                    out |= _lines(block[i + 1 :])
    return frozenset(out)


def _guarded_here(eng, node) -> bool:
    """``node`` is the value of an ``X if ...is_available() else ...`` or the right operand of
    ``...is_available() and X``: guarded in its own expression."""
    child, parent = node, eng.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        if isinstance(parent, cst.IfExp) and parent.body is child:
            if "is_available" in cst.Module([]).code_for_node(parent.test):
                return True
        if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
            if parent.right is child and "is_available" in cst.Module([]).code_for_node(
                parent.left
            ):
                return True
        child, parent = parent, eng.parent(parent)
    return False
