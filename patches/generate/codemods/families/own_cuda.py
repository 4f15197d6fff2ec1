"""Whether ``x.cuda()`` may call a project class's own ``cuda`` method (lightllm's vision
models are plain classes whose ``cuda()`` moves their weights and sets ``self.device``; they have
no ``to``, round 41): the receiver is bound, in the function holding the call, from a call of a
class of the tree (``tree_index``, else the file) that defines ``def cuda``. ``x.to(...)`` there
is another method, or none."""

from __future__ import annotations

import ast

from patches.generate.codemods.tree_index import TreeIndex, dotted


def own_cuda(ctx, line: int, receiver: str) -> str | None:
    """The class defining its own ``cuda`` that the receiver (``"self.model"``) of a
    ``.cuda()`` at ``line`` may be, else None."""
    classes = _with_cuda(ctx)
    if not classes:
        return None
    scope = ctx.scope_at(line).node
    for node in ast.walk(scope):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if receiver not in {dotted(t) for t in targets}:
            continue
        made = _made_by(ctx, node.value)
        if made in classes:
            return made
    return None


def _with_cuda(ctx) -> frozenset[str]:
    """The tree's classes (qualified, and bare for the file's own) that define ``cuda``."""
    memo = getattr(ctx, "own_cuda_classes", None)
    if memo is None:
        memo = ctx.own_cuda_classes = _classes(ctx)
    return memo


def _classes(ctx) -> frozenset[str]:
    index = getattr(ctx, "tree_index", None)
    if not isinstance(index, TreeIndex):
        index = TreeIndex.of_file(ctx.path, ctx.source)
    out = set()
    for d in index.named("cuda"):
        if d.cls:
            out.add(d.cls)
            if d.path == ctx.path:
                out.add(d.cls.rsplit(".", 1)[-1])
    return frozenset(out)


def _made_by(ctx, value: ast.AST) -> str | None:
    """The qualified callee at the root of a call chain (``Model().eval()`` -> ``Model``)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        value = value.func.value
    if not isinstance(value, ast.Call):
        return None
    name = dotted(value.func)
    return ctx.qualify(value.lineno, name) if name else None
