"""A device *string* that can only be the accelerator's type or "cpu": the name a script binds
once, to its two-way device pick, and never again::

    device = "cuda" if torch.cuda.is_available() else "cpu"      # or the if/else block
    ...
    if device == "cuda":                                          # -> device != "cpu"

A device string compared with "cuda" exactly is kept elsewhere ("cuda:0" is not "cuda"); this
one never carries an index, so it is a device type: on a CUDA machine its values are "cuda" and
"cpu", and after the pick's rewrite the accelerator's type and "cpu". Only where every
assignment of the name in its scope is such a pick, no function declares it ``global``, and the
comparison reads that binding (not a parameter or local of the same name). A pick that also
names MPS is three-way: left, and so is the neutral form (``torch.accelerator.current_accelerator()
.type if ... else "cpu"``): it gives any accelerator's type, so a comparison with "cuda" after it
is a test for CUDA (the form a three-way pick is rewritten to: a rerun leaves its test alone).
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

from patches.generate.intent import is_call

_CUDA_AVAILABLE = "torch.cuda.is_available"
_ACCEL_AVAILABLE = "torch.accelerator.is_available"


def _const(node: ast.AST, value: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


def _available(ctx, test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Call)
        and not test.args
        and not test.keywords
        and (is_call(ctx, test, _CUDA_AVAILABLE) or is_call(ctx, test, _ACCEL_AVAILABLE))
    )


def _accel_type(node: ast.AST) -> bool:
    """``"cuda"``, the accelerator the pick can give (not the neutral form's: any accelerator)."""
    return _const(node, "cuda")


def _pick_expr(ctx, value: ast.AST) -> bool:
    """``"cuda" if torch.cuda.is_available() else "cpu"``."""
    return (
        isinstance(value, ast.IfExp)
        and _available(ctx, value.test)
        and _accel_type(value.body)
        and _const(value.orelse, "cpu")
    )


def _pick_assign(ctx, stmt: ast.Assign, parents: dict) -> bool:
    """One assignment of the pick: the expression form, ``X = "cpu"``, or ``X = "cuda"`` as the
    body of an ``if <cuda available>:`` (the block forms: ``else: X = "cpu"`` or ``X = "cpu"``
    before it, each checked as its own assignment)."""
    value = stmt.value
    if _pick_expr(ctx, value) or _const(value, "cpu"):
        return True
    parent = parents.get(stmt)
    return (
        _accel_type(value)
        and isinstance(parent, ast.If)
        and stmt in parent.body
        and len(parent.body) == 1
        and _available(ctx, parent.test)
    )


@functools.lru_cache(maxsize=256)
def _picked(ctx, name: str, scope_start: int, scope_end: int) -> bool:
    parents = ctx.parents
    scope = next(s for s in ctx.scopes if (s.start, s.end) == (scope_start, scope_end))
    stores, picks = 0, 0
    for node in ctx.nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, ast.arg) and node.arg == name and ctx.scope_at(node.lineno) is scope:
            return False  # a parameter: the caller's value
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, (ast.Store, ast.Del)) or ctx.scope_at(node.lineno) is not scope:
            continue
        stores += 1
        stmt = parents.get(node)
        if (
            isinstance(stmt, ast.Assign)
            and stmt.targets == [node]
            and _pick_assign(ctx, stmt, parents)
        ):
            picks += 1
    return stores > 0 and stores == picks and _has_accel(ctx, name, scope, parents)


def _has_accel(ctx, name: str, scope, parents: dict) -> bool:
    """At least one of the assignments can give the accelerator (not ``X = "cpu"`` alone)."""
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [name]:
            if ctx.scope_at(node.lineno) is scope and not _const(node.value, "cpu"):
                return True
    return False


def picked_type(eng, node: cst.CSTNode) -> bool:
    """``node`` (a plain name) reads a device string bound only by a two-way pick."""
    if not isinstance(node, cst.Name):
        return False
    found = eng.ctx.binding(eng.line(node), node.value)
    if found is None or found[1] != {"other"}:
        return False
    scope = found[0]
    return _picked(eng.ctx, node.value, scope.start, scope.end)
