"""``redundant``: the rename would repeat the statement right before it (``torch.manual_seed(s)``
then ``torch.cuda.manual_seed(s)``: the first already seeds every device); the line is to be
deleted by hand, not rewritten. Not about CUDA, so asked only when no kind before it answered,
and a site left for it keeps no other site CUDA."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import qualified
from patches.generate.intent.probe import Evidence, Probe

KIND = "redundant"
SUMMARY = "the rewrite would repeat the statement before it: the line is to be deleted by hand"
ALONE = True


def _same_arguments(a: ast.Call, b: ast.Call) -> bool:
    return ast.dump(ast.Tuple(a.args)) == ast.dump(ast.Tuple(b.args)) and ast.dump(
        ast.Tuple([k.value for k in a.keywords])
    ) == ast.dump(ast.Tuple([k.value for k in b.keywords]))


def detect(p: Probe) -> list[Evidence]:
    node, it = p.node, p.index
    stmt = it.parents.get(node)
    if not (isinstance(node, ast.Call) and isinstance(stmt, ast.Expr)):
        return []
    new = p.options.renames.get(qualified(p.ctx, node.func) or "")
    block = it.block_of(stmt) or []
    i = block.index(stmt) if stmt in block else 0
    prev = block[i - 1] if i > 0 else None
    if not (
        new
        and isinstance(prev, ast.Expr)
        and isinstance(prev.value, ast.Call)
        and qualified(p.ctx, prev.value.func) == new
        and _same_arguments(prev.value, node)
    ):
        return []
    detail = f"the line before already calls {new}() with the same arguments: delete this one"
    return [Evidence(KIND, prev.lineno, detail)]
