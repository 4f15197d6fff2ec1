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

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.families import Family
from patches.generate.codemods.families.held_self import class_device, is_none
from patches.generate.codemods.families.method_to_device import storage_form

TO_DEVICE = "to-device"  # HN501's family (catalogue style `method-to`)
MODULE_TYPES = ("DEVICE_TYPE", "device_type")
_CUDA_METHOD = m.Call(func=m.Attribute(attr=m.Name("cuda")))


def _none_default(ctx, line: int, name: str) -> bool:
    """``name`` is a parameter of the function at ``line`` that defaults to None."""
    fn = ctx.scope_at(line).node
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = fn.args
    pos = a.posonlyargs + a.args
    pairs = list(zip(pos[len(pos) - len(a.defaults) :], a.defaults))
    pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    return any(p.arg == name and is_none(d) for p, d in pairs)


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
