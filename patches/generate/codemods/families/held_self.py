"""The device a class holds: ``self.device``, set in the class (never to None) and set by the
time a method reads it (``class_device``). own-device's ``x.cuda()`` -> ``x.to(self.device)`` and
the device literal's ``device="cuda"`` -> ``device=self.device`` read it; module-device leaves a
method of such a class to them."""

from __future__ import annotations

import ast
import functools


def is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _own_nodes(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes of a class's or function's body outside its nested classes (a local
    ``nn.Module`` in a test method has its own ``self``)."""
    todo = list(node.body)
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.ClassDef))


@functools.lru_cache(maxsize=8)
def _self_devices(ctx) -> dict[int, bool]:
    """class line -> whether its ``self.device`` is always set to something other than None."""
    out: dict[int, bool] = {}
    for cls in ctx.nodes:
        if not isinstance(cls, ast.ClassDef):
            continue
        values = [n.value for n in _self_device_stores(cls)]
        out[cls.lineno] = bool(values) and not any(v is None or is_none(v) for v in values)
    return out


def class_device(ctx, line: int) -> bool:
    """``line`` is in a method (taking ``self``) of a class that always sets ``self.device``,
    and has been set by then: a method that sets it itself (``__init__`` always) must have done
    so before ``line`` (mmdet's ``AppearanceFreeLink.__init__`` moves its model, then sets
    ``self.device`` from it)."""
    scope = ctx.scope_at(line)
    if scope.is_class or "self" not in scope.bound:
        return False
    parent = scope.parent
    while parent is not None and not parent.is_class:
        parent = parent.parent
    if parent is None or not _self_devices(ctx).get(parent.node.lineno, False):
        return False
    fn = scope.node
    sets = [n.lineno for n in _self_device_stores(fn)]
    if sets or getattr(fn, "name", "") == "__init__":
        return any(at < line for at in sets)
    return True


def _self_device_stores(node: ast.AST) -> list[ast.AST]:
    """The statements of a class or function (not of a class inside it) that set
    ``self.device``."""
    if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    return [
        n
        for n in _own_nodes(node)
        if isinstance(n, (ast.Assign, ast.AnnAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Attribute)
        and t.attr == "device"
        and isinstance(t.value, ast.Name)
        and t.value.id == "self"
    ]
