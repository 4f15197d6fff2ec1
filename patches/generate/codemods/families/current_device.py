"""The current CUDA device as a ``torch.device`` (HN503 ``torch.device("cuda", ...)`` with HN103
``torch.cuda.current_device()`` as its index) -> the current accelerator's device::

    torch.device("cuda", torch.cuda.current_device())   (or f"cuda:{torch.cuda.current_device()}")
        ->  torch.device(
                torch.accelerator.current_accelerator().type,
                torch.accelerator.current_device_index(),
            )

On a CUDA machine the same device (type and index); on another accelerator its current device
(upstream: FSDP's compute device, ``device_handle.current_device()`` / ``_get_accelerator()``);
without one both forms raise. The unit is the whole call: the type and the index change together
or not at all (a ``torch.device("cuda", torch.accelerator.current_device_index())`` would pair
CUDA with another device's index), so both sites must be this run's to fix.
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import specs_at, string_value

LITERAL_FAMILY = "device-literal"  # HN503's family: the "cuda" of torch.device(...)
INDEX = "torch.cuda.current_device"
NEW = (
    "torch.device(torch.accelerator.current_accelerator().type, "
    "torch.accelerator.current_device_index())"
)


def _fstring_shape(eng, call: cst.Call):
    """(the f-string, the index call) of ``torch.device(f"cuda:{torch.cuda.current_device()}")``."""
    arg = call.args[0]
    f = arg.value
    if arg.keyword or arg.star or not isinstance(f, cst.FormattedString) or len(f.parts) != 2:
        return None
    text, field = f.parts
    if not isinstance(text, cst.FormattedStringText) or text.value != "cuda:":
        return None
    if (
        not isinstance(field, cst.FormattedStringExpression)
        or field.conversion
        or field.format_spec
    ):
        return None
    index = field.expression
    if not isinstance(index, cst.Call) or index.args or INDEX not in eng.qualnames(index.func):
        return None
    return f, index


def _shape(eng, call: cst.Call):
    """(the "cuda" literal, the index call) of ``torch.device("cuda", torch.cuda.current_device())``
    or of ``torch.device(f"cuda:{torch.cuda.current_device()}")``."""
    if "torch.device" not in eng.qualnames(call.func):
        return None
    if len(call.args) == 1:
        return _fstring_shape(eng, call)
    if len(call.args) != 2:
        return None
    first, second = call.args
    if first.keyword or second.keyword or first.star or second.star:
        return None
    index = second.value
    if string_value(first.value) != "cuda" or not isinstance(index, cst.Call) or index.args:
        return None
    if INDEX not in eng.qualnames(index.func):
        return None
    return first.value, index


class CurrentDevice(Family):
    name = "current-device"

    def on_literal(self, eng, original, updated):
        """The "cuda" of the unit is rewritten with its call (``on_call``): answer for it so
        that the literal's own family does not take it alone."""
        arg = eng.parent(original)
        call = eng.parent(arg) if isinstance(arg, cst.Arg) else None
        if isinstance(call, cst.Call) and _shape(eng, call) is not None:
            return updated
        return None

    def on_node(self, eng, original, updated):
        """The f-string of the unit, likewise (rewritten with its call)."""
        if not isinstance(original, cst.FormattedString):
            return None
        return self.on_literal(eng, original, updated)

    def on_call(self, eng, original, updated):
        shape = _shape(eng, original)
        if shape is None:
            return None
        literal, index = shape
        lit_specs = specs_at(eng, literal, LITERAL_FAMILY)
        idx_specs = [s for s in eng.specs_for("call", index) if INDEX in s.names]
        if not lit_specs or not idx_specs:
            return None
        if not eng.fixes(lit_specs[0].rule, eng.line(literal)):
            return None
        if not eng.fixes(idx_specs[0].rule, eng.line(index)):
            eng.fail(lit_specs[0], literal, "its index stays CUDA's current device")
            return updated
        eng.done(lit_specs[0], literal)
        eng.done(idx_specs[0], index)
        eng.remove_unused_import_by_node(index.func)
        eng.add_needed_import("torch", node=original)
        return cst.parse_expression(NEW)
