"""The deprecated default tensor type set to a CUDA type (HN511), the older training scripts'
first line (SSD, YOLO ports)::

    torch.set_default_tensor_type("torch.cuda.FloatTensor")
->  torch.set_default_device(torch.accelerator.current_accelerator())
    torch.set_default_dtype(torch.float32)

``set_default_tensor_type`` (deprecated since PyTorch 2.1; its docstring names these two as the
alternatives) made every new tensor one of that type: the type's dtype as the default floating
dtype, on the current CUDA device. ``set_default_device`` with the current accelerator does the
device half (a device without an index: the current one when each tensor is made; ``None`` without
an accelerator, which is the CPU), ``set_default_dtype`` the dtype half. The ``accelerator_api``
target writes ``accelerator_api.device_type()`` ("cpu" without an accelerator).

Only a bare statement with the type as its one argument, a floating CUDA type by string or
by name (``torch.set_default_tensor_type(torch.cuda.FloatTensor)``: HN507's site, taken here):
anything else is left with the reason.
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import expr, statement, string_value
from patches.generate.codemods.families.script_plan import LEGACY_DTYPES

SETTER = "torch.set_default_tensor_type"
# the floating CUDA types a default can be, and their dtypes (the legacy types' table)
DTYPES = {
    f"torch.cuda.{t}": LEGACY_DTYPES[t]
    for t in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor")
}


def _setter_call(eng, stmt: cst.SimpleStatementLine) -> cst.Call | None:
    """The ``set_default_tensor_type(...)`` call the one-statement line ``stmt`` is."""
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return None
    call = stmt.body[0].value
    if isinstance(call, cst.Call) and SETTER in eng.qualnames(call.func):
        return call
    return None


def _kind(eng, call: cst.Call) -> str:
    """The one type ``call`` sets: a string's value, or the name's qualified name ("": other)."""
    args = call.args
    if len(args) != 1 or args[0].keyword or args[0].star:
        return ""
    value = args[0].value
    text = string_value(value)
    if text is not None:
        return text
    return next(iter(sorted(eng.qualnames(value) & set(DTYPES))), "")


def is_set_type(eng, node) -> bool:
    """``node`` is the type ``torch.set_default_tensor_type(node)`` sets (this family's)."""
    arg = eng.parent(node)
    call = eng.parent(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(call, cst.Call) and SETTER in eng.qualnames(call.func)


class DefaultType(Family):
    name = "default-type"

    def on_call(self, eng, original, updated):
        """A setter call that is not a bare statement: left, with the reason."""
        specs = eng.specs_for(self.name, original) + eng.specs_for("legacy-types", original)
        if specs and SETTER in eng.qualnames(original.func):
            stmt = eng.parent(eng.parent(original))
            if not (isinstance(stmt, cst.SimpleStatementLine) and _setter_call(eng, stmt)):
                eng.fail(specs[0], original, "not a statement of its own")
        return None

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.SimpleStatementLine):
            return None
        call = _setter_call(eng, original)
        specs = eng.specs_for(self.name, original) if call is not None else []
        if call is not None and not specs:  # the name form: HN507's site
            names = eng.qualnames(call.args[0].value) if call.args else set()
            specs = [s for s in eng.specs_for("legacy-types", original) if names & set(s.names)]
        if not specs:
            return None
        spec = specs[0]
        kind = _kind(eng, call)
        if kind not in DTYPES:
            eng.fail(spec, original, "the type is not one floating CUDA type")
            return None
        if not string_value(call.args[0].value):
            eng.remove_unused_import_by_node(call.args[0].value)
        device = expr(
            eng,
            spec,
            original,
            "torch.accelerator.current_accelerator()",
            "accelerator_api.device_type()",
        )
        code = cst.Module(body=[]).code_for_node(device)
        eng.add_needed_import("torch", node=original)
        eng.done(spec, original)
        first = statement(eng, f"torch.set_default_device({code})\n")
        second = statement(eng, f"torch.set_default_dtype(torch.{DTYPES[kind]})\n")
        first = first.with_changes(
            leading_lines=updated.leading_lines, trailing_whitespace=updated.trailing_whitespace
        )
        return cst.FlattenSentinel([first, second])
