"""``redundant``: the rename would repeat a statement of the run of calls before it
(``torch.manual_seed(s)``, ``np.random.seed(s)``, then ``torch.cuda.manual_seed(s)``: the first
already seeds every device; ``torch.random.manual_seed`` is the same function); the line is to be
deleted by hand, not rewritten. Not about CUDA, so asked only when no kind before it answered,
and a site left for it keeps no other site CUDA."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import qualified
from patches.generate.intent.probe import Evidence, Probe

KIND = "redundant"
SUMMARY = "the rewrite would repeat a call just before it: the line is to be deleted by hand"
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
    for prev in reversed(block[:i]):  # the seed block before it
        if not (isinstance(prev, ast.Expr) and isinstance(prev.value, ast.Call)):
            break
        name = qualified(p.ctx, prev.value.func) or ""
        if new and same_function(name, new) and _same_arguments(prev.value, node):
            what = f"line {prev.lineno} already calls {new}() with the same arguments"
            return [Evidence(KIND, prev.lineno, f"{what}: delete this one")]
        if not other_seed(name):
            break
    return []


# one function under two names (``torch.manual_seed is torch.random.manual_seed``)
_SAME = {"torch.random.manual_seed": "torch.manual_seed"}


def same_function(a: str, b: str) -> bool:
    return _SAME.get(a, a) == _SAME.get(b, b)


def other_seed(name: str) -> bool:
    """A seed of another generator (Python's, NumPy's, torch's CPU-and-all): between a torch
    seed and CUDA's it draws no CUDA random number."""
    last = name.rsplit(".", 1)[-1]
    return not name.startswith("torch.cuda.") and last in ("seed", "manual_seed", "set_seed")
