"""A device count as an availability check: ``if torch.cuda.device_count():``, ``if n_gpu > 1:``
after ``n_gpu = torch.cuda.device_count()``, ``for i in range(n_gpu):``. Each runs its body only
where the device is there, as ``if torch.cuda.is_available():`` does (fastai's ``show_install``
names each GPU inside ``if torch_gpu_cnt:``; audiocraft picks ``"cuda"`` inside ``if
torch.cuda.device_count():``). Shared by the gate (``unguarded.checked``) and the codemod's
checked blocks (``idioms_memory``)."""

from __future__ import annotations

import ast
import functools

from patches.generate.intent.bindings import binding_targets

_COUNT = "device_count"


def _count_call(node) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == _COUNT
        and not node.args
    )


@functools.lru_cache(maxsize=16)
def count_names(tree: ast.AST) -> frozenset[str]:
    """Names every binding of which in ``tree`` (``bindings.binding_targets``, parameters) is a
    plain assignment of a ``<module>.device_count()`` call (a name bound otherwise anywhere in
    the file is not one)."""
    counts: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            other.add(node.arg)
        for target, value in binding_targets(node):
            plain = isinstance(target, ast.Name) and not isinstance(node, ast.AugAssign)
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    counted = plain and n is target and _count_call(value)
                    (counts if counted else other).add(n.id)
    return frozenset(counts - other)


def _is_count(node, names: frozenset[str]) -> bool:
    return _count_call(node) or (isinstance(node, ast.Name) and node.id in names)


def _number(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def count_test(test: ast.AST, names: frozenset[str]) -> bool | None:
    """True where ``test`` holds only with a device (a positive count: ``n``, ``n > k`` for
    k >= 0, ``n >= k`` / ``n == k`` for k >= 1, ``n != 0``), False where it holds only without
    one (``not n``, ``n == 0``, ``n < 1``, ``n <= 0``), None otherwise; an ``and`` holds only
    with a device if one of its terms does."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return True if any(count_test(v, names) for v in test.values) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        if isinstance(test.operand, ast.BoolOp):
            return None  # `not (a and n)` holds with a device too
        inner = count_test(test.operand, names)
        return None if inner is None else not inner
    if _is_count(test, names):
        return True
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _is_count(right, names) and not _is_count(left, names):
        flip = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
        left, right, op = right, left, flip.get(type(op), type(op))()
    k = _number(right)
    if not _is_count(left, names) or k is None:
        return None
    positive = {ast.Gt: k >= 0, ast.GtE: k >= 1, ast.Eq: k >= 1, ast.NotEq: k == 0}
    negative = {ast.Eq: k == 0, ast.Lt: k <= 1, ast.LtE: k <= 0}
    if positive.get(type(op)):
        return True
    if negative.get(type(op)):
        return False
    return None


def counted_loop(node: ast.AST, names: frozenset[str]) -> bool:
    """``for ... in range(<count>)``: its body runs only with a device."""
    it = getattr(node, "iter", None)
    return (
        isinstance(node, (ast.For, ast.AsyncFor))
        and isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and len(it.args) == 1
        and _is_count(it.args[0], names)
    )
