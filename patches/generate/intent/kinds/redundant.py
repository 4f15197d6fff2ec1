"""``redundant``: the rename would repeat a statement of the run of calls before it
(``torch.manual_seed(s)``, ``np.random.seed(s)``, then ``torch.cuda.manual_seed(s)``: the first
already seeds every device; ``torch.random.manual_seed`` is the same function); the line is to be
deleted by hand, not rewritten. So is a block under ``if torch.cuda.is_available():`` that holds
only such repeats (nanotron's ``set_random_seed``), its guard with it. Not about CUDA, so asked only when no kind before it answered,
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
    if isinstance(stmt, ast.If) and stmt.test is node:
        hit = _repeated_block(p, stmt)  # the guard of a block that only repeats seeds
        return [Evidence(KIND, hit[0], f"{hit[1]}: delete the block")] if hit else []
    if not (isinstance(node, ast.Call) and isinstance(stmt, ast.Expr)):
        return []
    hit = _repeats(p, node, it.block_of(stmt) or [], stmt)
    guard = it.parents.get(stmt)
    if hit is None and isinstance(guard, ast.If) and stmt in guard.body:
        hit = _repeated_block(p, guard)
    return [Evidence(KIND, hit[0], f"{hit[1]}: delete this one")] if hit else []


def _repeated_block(p: Probe, guard: ast.If) -> tuple[int, str] | None:
    """The first repeat, where ``guard`` is ``if torch.cuda.is_available():`` with no ``else``
    and every statement of its block repeats a seed of the run before it."""
    if guard.orelse or not _available(p, guard.test):
        return None
    before = p.index.block_of(guard) or []
    hits = [_repeats(p, getattr(s, "value", None), before, guard) for s in guard.body]
    return hits[0] if all(hits) else None


def _available(p: Probe, test: ast.AST) -> bool:
    """``test`` is ``torch.cuda.is_available()``."""
    return isinstance(test, ast.Call) and qualified(p.ctx, test.func) == "torch.cuda.is_available"


def _repeats(p: Probe, node: ast.AST, block: list, stmt: ast.stmt) -> tuple[int, str] | None:
    """(line, what) of the call in the seed run of ``block`` before ``stmt`` that the rename of
    ``node`` would repeat, else None."""
    if not isinstance(node, ast.Call):
        return None
    new = p.options.renames.get(qualified(p.ctx, node.func) or "")
    i = block.index(stmt) if stmt in block else 0
    for prev in reversed(block[:i]):  # the seed block before it
        if not (isinstance(prev, ast.Expr) and isinstance(prev.value, ast.Call)):
            break
        name = qualified(p.ctx, prev.value.func) or ""
        if new and same_function(name, new) and _same_arguments(prev.value, node):
            return prev.lineno, f"line {prev.lineno} already calls {new}() with the same arguments"
        if not other_seed(name):
            break
    return None


# one function under two names (``torch.manual_seed is torch.random.manual_seed``)
_SAME = {"torch.random.manual_seed": "torch.manual_seed"}


def same_function(a: str, b: str) -> bool:
    return _SAME.get(a, a) == _SAME.get(b, b)


def other_seed(name: str) -> bool:
    """A seed of another generator (Python's, NumPy's, torch's CPU-and-all): between a torch
    seed and CUDA's it draws no CUDA random number."""
    last = name.rsplit(".", 1)[-1]
    return not name.startswith("torch.cuda.") and last in ("seed", "manual_seed", "set_seed")
