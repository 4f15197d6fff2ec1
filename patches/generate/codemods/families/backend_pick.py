"""A backend picked by hand (HN601 ``"nccl" if <device> else "gloo"``) -> the backend registered
for the device, upstream's form (``common_dtensor``, torch 2.4 -> 2.13):

* ``"nccl" if device_type == "cuda" else "gloo"`` ->
  ``dist.get_default_backend_for_device(device_type)`` (the test is a device type: HN505);
* ``"nccl" if torch.cuda.is_available() else "gloo"`` ->
  ``dist.get_default_backend_for_device(torch.accelerator.current_accelerator() or "cpu")``.

cuda -> nccl and cpu -> gloo as before; xpu -> xccl, a PrivateUse1 backend -> its own. The
module is named as the file imports it (``dist``), else ``torch.distributed``. The pick's test
is rewritten with it (a companion span of the site: its "cuda" goes too); every other HN601
shape is ``idioms_backend.Backend``'s.
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families.idioms_backend import Backend
from patches.generate.codemods.families.idioms_common import CURRENT_OR_CPU, node_span, string_value

IS_AVAILABLE = "torch.cuda.is_available"
NEW = "get_default_backend_for_device"


def _device_type_test(node) -> cst.BaseExpression | None:
    """``X == "cuda"`` / ``"cuda" == X`` with X a device type (``*.type``, ``*type``) -> X."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return None
    target = node.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return None
    if string_value(target.comparator) == "cuda":
        other = node.left
    elif string_value(node.left) == "cuda":
        other = target.comparator
    else:
        return None
    name = other.attr.value if isinstance(other, cst.Attribute) else getattr(other, "value", "")
    return other if isinstance(name, str) and name.lower().endswith("type") else None


def _ast_picks(tree: ast.AST, lines: frozenset[int]):
    """(line of the "nccl", the pick's test) for each nccl/gloo pick on ``lines``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.IfExp) or node.body.lineno not in lines:
            continue
        body, other = node.body, node.orelse
        if not (isinstance(body, ast.Constant) and body.value == "nccl"):
            continue
        if isinstance(other, ast.Constant) and other.value == "gloo":
            yield body.lineno, node.test


class BackendPick(Backend):
    name = "backend-pick"

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        """The pick's test goes with its "nccl" (the whole expression is replaced)."""
        out: dict[tuple[str, int], list] = {}
        for line, test in _ast_picks(ctx.tree, lines):
            out.setdefault((spec.rule, line), []).append(node_span(test))
        return out

    def _pick(self, eng, node) -> cst.BaseExpression | None:
        """The device argument for ``node`` (an IfExp picking nccl/gloo), else None."""
        if not isinstance(node, cst.IfExp):
            return None
        if string_value(node.body) != "nccl" or string_value(node.orelse) != "gloo":
            return None
        if not eng.specs_for(self.name, node.body):
            return None
        device = _device_type_test(node.test)
        if device is not None:
            return device
        test = node.test
        if (
            isinstance(test, cst.Call)
            and not test.args
            and IS_AVAILABLE in eng.qualnames(test.func)
        ):
            eng.add_needed_import("torch", node=node)
            # get_default_backend_for_device takes a device or a string: no accelerator -> gloo
            return cst.parse_expression(CURRENT_OR_CPU)
        return None

    def _inside(self, eng, node) -> bool:
        """``node`` is part of a pick this family rewrites whole."""
        parent = eng.parent(node)
        while parent is not None and not isinstance(parent, cst.BaseStatement):
            if isinstance(parent, cst.IfExp):
                return self._pick(eng, parent) is not None
            parent = eng.parent(parent)
        return False

    def on_literal(self, eng, original, updated):
        if string_value(original) in ("nccl", "gloo", "cuda") and self._inside(eng, original):
            return updated
        return super().on_literal(eng, original, updated)

    def on_call(self, eng, original, updated):
        return updated if self._inside(eng, original) else None

    def on_node(self, eng, original, updated):
        if isinstance(original, cst.Comparison):
            return updated if self._inside(eng, original) else None
        device = self._pick(eng, original)
        if device is None:
            return None
        for family in (self.name, "device-predicates", "guard"):
            for spec in eng.specs_for(family, original):
                eng.done(spec, original)
        module = next(
            (k for k, v in eng.ctx.module.imports.items() if v == "torch.distributed"), None
        )
        if module is None:
            eng.add_needed_import("torch", node=original)
            module = "torch.distributed"
        if isinstance(device, cst.Call) or not device.lpar:
            device = device.deep_clone()
        return cst.Call(
            cst.parse_expression(f"{module}.{NEW}"),
            [cst.Arg(device.with_changes(lpar=[], rpar=[]))],
        )
