"""CUDA's own profiling and allocator settings in a script (HN116 ``cuda-own-effect``): kept,
under the check that lets the port run where CUDA is not::

    torch.cuda.nvtx.range_push("fwd")     ->    if torch.cuda.is_available():
                                                    torch.cuda.nvtx.range_push("fwd")

NVTX ranges, the per-process memory fraction, ``ipc_collect``, the allocator's history and
snapshot, the CUDA profiler's start/stop and the sync debug mode have no neutral call that does
the same, and each raises on a CPU-only build (``print(torch.cuda.memory_summary())`` too: its
statistics are empty there). A script whose device places were ported would still stop at them.
The statement stays CUDA's and runs exactly as before on CUDA; elsewhere it is skipped. Only a
statement made for the call's effect (its value unused, or printed) in a script
(``script_plan.is_script``); a library, a call whose value is used, and a statement already
under a check are left with their reason.

A range or NVTX emission used as a context (``with torch.cuda.nvtx.range("fwd"):``, ``with
torch.autograd.profiler.emit_nvtx():``) guards its block: the block must run everywhere, so the
context is CUDA's where CUDA is and ``contextlib.nullcontext()`` elsewhere::

    with torch.cuda.nvtx.range("fwd"):    ->    with torch.cuda.nvtx.range("fwd") if torch.cuda.is_available() else contextlib.nullcontext():
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import under_availability_check
from patches.generate.codemods.families.script_plan import is_script

TEST = "torch.cuda.is_available()"
NULL_CONTEXT = "contextlib.nullcontext()"


def _effect_call(stmt: cst.CSTNode) -> cst.Call | None:
    """The call a one-statement line makes for its effect: ``f(...)`` or ``print(f(...))``."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    expr = stmt.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return None
    call = expr.value
    if _print(call):
        inner = call.args[0].value
        return inner if isinstance(inner, cst.Call) else None
    return call


def _print(call: cst.Call) -> bool:
    return (
        isinstance(call.func, cst.Name)
        and call.func.value == "print"
        and len(call.args) == 1
        and call.args[0].keyword is None
        and not call.args[0].star
    )


def _statement(eng, call: cst.Call):
    """The statement line holding ``call`` (a few levels up: print's argument)."""
    node = call
    for _ in range(5):
        node = eng.parent(node)
        if node is None or isinstance(node, cst.SimpleStatementLine):
            return node
    return None


def under_cuda_test(eng, node) -> bool:
    """``node`` is reached only where its test names CUDA: its line is in the body of such an
    ``if``/``while``, or it is the value of ``X if <test> else ...`` or ``<test> and X``. (An
    accelerator's check is not enough: trn passes it, and CUDA's own call raises there.)"""
    if eng.line(node) in _cuda_tested(eng.ctx.tree):
        return True
    child, parent = node, eng.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        test = None
        if isinstance(parent, cst.IfExp) and parent.body is child:
            test = parent.test
        elif isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
            test = parent.left if parent.right is child else None
        if test is not None and "cuda" in cst.Module([]).code_for_node(test):
            return True
        child, parent = parent, eng.parent(parent)
    return False


def cuda_or(value: cst.BaseExpression, default: str, bare: bool) -> cst.IfExp:
    """``value if torch.cuda.is_available() else <default>`` (parenthesized unless ``bare``)."""
    return cst.IfExp(
        test=cst.parse_expression(TEST),
        body=value,
        orelse=cst.parse_expression(default),
        lpar=[] if bare else [cst.LeftParen()],
        rpar=[] if bare else [cst.RightParen()],
    )


def _context(eng, call: cst.Call) -> bool:
    """``call`` is a ``with`` statement's context expression."""
    parent = eng.parent(call)
    return isinstance(parent, cst.WithItem) and parent.item is call


@functools.lru_cache(maxsize=16)
def _cuda_tested(tree: ast.Module) -> frozenset[int]:
    lines: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.If, ast.While)) and "cuda" in ast.unparse(n.test):
            for stmt in n.body:
                lines.update(range(stmt.lineno, stmt.end_lineno + 1))
    return frozenset(lines)


class OwnEffect(Family):
    name = "own-effect"

    def on_call(self, eng, original, updated):
        """Sites outside the one shape ``on_node`` wraps are left with their reason."""
        specs = eng.specs_for(self.name, original)
        if not specs or not eng.qualnames(original.func) & set(specs[0].names):
            return None
        stmt = _statement(eng, original)
        if not is_script(eng.ctx):
            eng.fail(specs[0], original, "CUDA's own call in library code: kept")
        elif under_cuda_test(eng, original):
            eng.fail(specs[0], original, "under a CUDA check already")
        elif _context(eng, original):
            eng.add_needed_import("torch", node=original)
            eng.add_needed_import("contextlib")
            eng.done(specs[0], original)
            return cuda_or(updated, NULL_CONTEXT, bare=True)
        elif stmt is None or _effect_call(stmt) is not original:
            eng.fail(specs[0], original, "its value is used: kept")
        return None

    def on_node(self, eng, original, updated):
        """The statement, under ``if torch.cuda.is_available():``."""
        call = _effect_call(original)
        if call is None or not is_script(eng.ctx) or under_cuda_test(eng, call):
            return None
        specs = eng.specs_for(self.name, call)
        if not specs or not eng.qualnames(call.func) & set(specs[0].names):
            return None
        eng.done(specs[0], call)
        return under_availability_check(eng, original, updated, test=TEST)
