"""A CUDA spin kernel issued as a scheduling hint (HN114 ``torch.cuda._sleep(<cycles>)``, the whole
body of an ``if``, in library code with no device in scope) -> the same hint, issued only where
CUDA is there; upstream's form (symmetric memory's pipelined producers, torch 2.13 -> 2.14)::

    if step == 2:                          if step == 2 and torch.cuda.is_available():
        torch.cuda._sleep(100)       ->        torch.cuda._sleep(100)

The sleep only nudges the order in which two streams' kernels start; the code around it (the
streams it orders, rewritten by the stream families once this site no longer stays CUDA: the
gate's ``cuda-timeline``) works without it. On CUDA the condition is the old one; elsewhere the
hint is skipped instead of failing. Only a constant number of cycles (a computed one is a
measured delay: a test's timing, which the device family or a person decides), only in an
``if`` with no ``else``, and never in a test file (a test's sleep is what it tests).
"""

from __future__ import annotations

import ast
import functools
from typing import NamedTuple

import libcst as cst

from patches.generate.codemods.families.base import is_test_file
from patches.generate.codemods.families.idioms_common import conjuncts

SLEEP = "torch.cuda._sleep"
AVAILABLE = "torch.cuda.is_available"


class _Hint(NamedTuple):
    first: int  # the ``if``'s lines
    last: int
    func: str  # the callee as written (``torch.cuda._sleep``)
    checks: tuple[str, ...]  # the callees of the test's argument-less ``and`` terms


def _checks(test: ast.expr) -> tuple[str, ...]:
    terms = conjuncts(test)
    return tuple(ast.unparse(t.func) for t in terms if isinstance(t, ast.Call) and not t.args)


@functools.lru_cache(maxsize=16)
def _hints(tree: ast.Module) -> dict[int, _Hint]:
    """_sleep line -> the ``if`` whose whole body is that one call with a constant ``int``."""
    out = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or node.orelse or len(node.body) != 1:
            continue
        stmt = node.body[0]
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords):
            continue
        arg = call.args[0]
        if isinstance(arg, ast.Constant) and type(arg.value) is int:
            func = ast.unparse(call.func)
            out[stmt.lineno] = _Hint(node.lineno, node.end_lineno, func, _checks(node.test))
    return out


def hints(ctx, lines) -> dict[int, tuple[int, int]]:
    """The hint ``if``s (first, last line) of the _sleep calls at ``lines``: the callee is
    ``torch.cuda._sleep`` by the file's imports, the test does not ask for CUDA yet (a rerun),
    the file is no test."""
    if is_test_file(ctx.path):
        return {}
    out = {}
    for line, h in _hints(ctx.tree).items():
        asked = {ctx.qualify(line, c) for c in h.checks}
        if line in lines and ctx.qualify(line, h.func) == SLEEP and AVAILABLE not in asked:
            out[line] = (h.first, h.last)
    return out


def guard(eng, family: str, original: cst.If, updated: cst.If) -> cst.If | None:
    """``updated`` with ``and torch.cuda.is_available()`` added to its test, the _sleep of its
    body done; None where ``original`` is no hint ``if`` of this step."""
    stmt = original.body.body[0] if original.body.body else None
    expr = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
    call = expr.value if isinstance(expr, cst.Expr) else None
    if not isinstance(call, cst.Call):
        return None
    line = eng.line(call)
    span = hints(eng.ctx, frozenset({line})).get(line)
    specs = eng.specs_for(family, call)
    if span != (eng.line(original), eng.end_line(original)) or not specs:
        return None
    eng.done(specs[0], call)
    left = updated.test
    tight = (cst.Name, cst.Attribute, cst.Call, cst.Comparison, cst.Subscript)
    chained = isinstance(left, cst.BooleanOperation) and isinstance(left.operator, cst.And)
    if not (isinstance(left, tight) or chained or left.lpar):
        left = left.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    test = cst.BooleanOperation(
        left=left, operator=cst.And(), right=cst.parse_expression(f"{AVAILABLE}()")
    )
    return updated.with_changes(test=test)
