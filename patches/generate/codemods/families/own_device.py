"""``x.cuda()`` (HN501) -> ``x.to(<the device the code already holds>)``, where no ``device`` is
in scope for the plain rewrite (``families.MethodToDevice``):

* ``x.cuda(t.device)`` / ``x.cuda(device=t.device)`` -> ``x.to(t.device)``: the device the call
  names (upstream's quantization hooks: ``.cuda(tensor.device)`` -> ``.to(tensor.device)``);
* ``x.cuda()`` in a method of a class that sets ``self.device`` (never to None) ->
  ``x.to(self.device)``;
* ``x.cuda()`` with a ``device_type`` in scope (a parameter, a local, or the module's
  ``DEVICE_TYPE``/``device_type``, upstream's ``common_fsdp``) -> ``x.to(device_type)``.

On CUDA each names the device ``.cuda()`` picked; ``non_blocking=`` and other keywords stay.
``.cuda(None)`` is the current CUDA device where ``.to(None)`` is a no-op, so a device that may
be None (a parameter defaulting to None, an attribute ever set to None) is left.
"""

from __future__ import annotations

import ast
import functools

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.families import Family
from patches.generate.codemods.families.method_to_device import storage_form

TO_DEVICE = "to-device"  # HN501's family (catalogue style `method-to`)
MODULE_TYPES = ("DEVICE_TYPE", "device_type")
_CUDA_METHOD = m.Call(func=m.Attribute(attr=m.Name("cuda")))


def _is_none(node) -> bool:
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
        out[cls.lineno] = bool(values) and not any(v is None or _is_none(v) for v in values)
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


def _none_default(ctx, line: int, name: str) -> bool:
    """``name`` is a parameter of the function at ``line`` that defaults to None."""
    fn = ctx.scope_at(line).node
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = fn.args
    pos = a.posonlyargs + a.args
    pairs = list(zip(pos[len(pos) - len(a.defaults) :], a.defaults))
    pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    return any(p.arg == name and _is_none(d) for p, d in pairs)


def _named_device(eng, node: cst.BaseExpression) -> bool:
    """``t.device`` (a tensor's, module's or storage's device: never None) or a local device."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "device" and not (
            isinstance(node.value, cst.Name) and node.value.value == "self"
        )
    if isinstance(node, cst.Name) and node.value.endswith("device"):
        line = eng.line(node)
        return eng.ctx.bound_before(line, node.value) and not _none_default(
            eng.ctx, line, node.value
        )
    return False


class OwnDevice(Family):
    name = "own-device"

    def on_call(self, eng, original, updated):
        return storage_form(eng, original, self._on_cuda(eng, original, updated))

    def _on_cuda(self, eng, original, updated):
        if not m.matches(original, _CUDA_METHOD):
            return None
        specs = eng.specs_for(TO_DEVICE, original) + eng.specs_for(self.name, original)
        if not specs:
            return None
        spec = specs[0]
        named = [
            i
            for i, a in enumerate(original.args)
            if (a.keyword is None and not a.star) or (a.keyword and a.keyword.value == "device")
        ]
        if named:
            if len(named) != 1 or not _named_device(eng, original.args[named[0]].value):
                return None  # an index: MethodToDevice's (or left)
            rest = [a for i, a in enumerate(updated.args) if i != named[0]]
            return self._to(eng, spec, original, updated, updated.args[named[0]].value, rest)
        if eng.in_scope(original, "device"):
            return None  # MethodToDevice's plain `.to(device)`
        line = eng.line(original)
        if class_device(eng.ctx, line):
            target = cst.parse_expression("self.device")
        elif eng.ctx.bound_before(line, "device_type") and not _none_default(
            eng.ctx, line, "device_type"
        ):
            target = cst.Name("device_type")
        else:
            held = [n for n in MODULE_TYPES if eng.ctx.module.bound.get(n)]
            if not held:
                return None
            target = cst.Name(held[0])
        return self._to(eng, spec, original, updated, target, list(updated.args))

    @staticmethod
    def _to(eng, spec, original, updated, device, rest):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        first = cst.Arg(device.deep_clone(), comma=comma if rest else cst.MaybeSentinel.DEFAULT)
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        eng.done(spec, original)
        return updated.with_changes(
            func=updated.func.with_changes(attr=cst.Name("to")), args=(first, *rest)
        )
