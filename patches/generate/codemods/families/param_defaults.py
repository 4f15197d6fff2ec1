"""Parameter defaults (HN502/HN509 ``def pin_memory(self, device="cuda")``) -> ``device=None``
where the function only hands the parameter on to an API whose own ``None`` means the current
accelerator, upstream's form (``Storage.pin_memory``/``is_pinned`` in torch 2.4 -> 2.13):

    def pin_memory(self, device: Union[str, torch.device] = "cuda"):
        ... .pin_memory(device)
    ->
    def pin_memory(self, device: Union[str, torch.device] | None = None):

The callee resolves the accelerator (``torch.accelerator.current_accelerator()``): "cuda" on a
CUDA machine, as before. The forwarding APIs are data (``FORWARDS``), each documented in the
installed torch as defaulting to the current accelerator (tests/patches/test_param_defaults.py
reads their docstrings). A parameter used any other way (compared, formatted, indexed) keeps its
default: its body would have to resolve it first.
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families import Family
from patches.generate.codemods.families.idioms_common import string_value

# Tensor/Storage methods whose ``device`` parameter defaults to the current accelerator.
FORWARDS = frozenset({"pin_memory", "is_pinned"})
LITERAL_FAMILIES = ("device-literal", "device-defaults")  # HN502's and HN509's specs


def _function_at(ctx, line: int, name: str):
    """The function whose parameter ``name`` has its default on ``line``."""
    for node in ctx.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = a.posonlyargs + a.args + a.kwonlyargs
            if any(p.arg == name for p in params) and node.lineno <= line <= node.body[0].lineno:
                return node
    return None


def _forwarded_only(fn, name: str) -> bool:
    """Every use of ``name`` in ``fn``'s body is the device argument of a ``FORWARDS`` call."""
    ok: set[int] = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr not in FORWARDS:
            continue
        for a in node.args[:1]:
            if isinstance(a, ast.Name) and a.id == name:
                ok.add(id(a))
        for k in node.keywords:
            if k.arg == "device" and isinstance(k.value, ast.Name) and k.value.id == name:
                ok.add(id(k.value))
    uses = [
        n for stmt in fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name
    ]
    return bool(uses) and all(id(n) in ok and isinstance(n.ctx, ast.Load) for n in uses)


def _optional(ann: cst.BaseExpression) -> cst.BaseExpression:
    """``ann | None`` (``None`` added to a ``Union[...]``); unchanged if it already allows None."""
    code = cst.Module([]).code_for_node(ann)
    if "None" in code or "Optional" in code:
        return ann
    if (
        isinstance(ann, cst.Subscript)
        and isinstance(ann.value, (cst.Name, cst.Attribute))
        and cst.Module([]).code_for_node(ann.value).endswith("Union")
    ):
        last = ann.slice[-1].with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
        return ann.with_changes(
            slice=[*ann.slice[:-1], last, cst.SubscriptElement(cst.Index(cst.Name("None")))]
        )
    return cst.BinaryOperation(left=ann, operator=cst.BitOr(), right=cst.Name("None"))


class ParamDefaults(Family):
    name = "param-defaults"

    def _specs(self, eng, node):
        return [s for f in LITERAL_FAMILIES for s in eng.specs_for(f, node) if "cuda" in s.names]

    def _target(self, eng, param: cst.Param):
        """The specs of a forwarded ``"cuda"`` default of ``param``, else None."""
        if param.default is None or string_value(param.default) != "cuda":
            return None
        specs = self._specs(eng, param.default)
        if not specs:
            return None
        fn = _function_at(eng.ctx, eng.line(param.default), param.name.value)
        if fn is None or not _forwarded_only(fn, param.name.value):
            return []
        return specs

    def on_literal(self, eng, original, updated):
        parent = eng.parent(original)
        if not isinstance(parent, cst.Param) or parent.default is not original:
            return None
        specs = self._target(eng, parent)
        if specs is None:
            return None
        if not specs:
            return None  # not forwarded: the literal families keep it, with their reason
        if parent.annotation is not None and not hasattr(type(eng), "leave_Param"):
            eng.fail(specs[0], original, "annotated parameter: no Param hook to widen its type")
            return updated
        for spec in specs:
            eng.done(spec, original)
        return cst.Name("None")

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.Param) or original.annotation is None:
            return None
        if not self._target(eng, original):
            return None
        ann = updated.annotation
        return updated.with_changes(
            annotation=ann.with_changes(annotation=_optional(ann.annotation))
        )
