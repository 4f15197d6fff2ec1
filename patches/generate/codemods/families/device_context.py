"""``with torch.cuda.device(i):`` (HN106) -> ``with torch.accelerator.device_index(i):``,
upstream's form (autograd's ``Broadcast``/``Scatter`` functions, torch 2.4 -> 2.13; vllm#36144).

``device_index`` takes an int or None (None: no switch, as ``torch.cuda.device(None)``), where
``torch.cuda.device`` also took a ``torch.device`` or a string: the argument must be an index
the file always computes as one (``values.is_index``: ``t.get_device()``, ``d.index``, a list of
``_get_device_index(...)``; a name every producer of which in its scope is one, a nested worker's
parameter by its callers' arguments, as ``parallel_apply``'s ``_worker(..., device)``), or a
``"cuda:N"`` literal, which becomes ``N``. Anything else (a producer that may be a
``torch.device`` or a string), and ``torch.cuda.device_of(t)``, is left with the reason.

In a script that runs on the CPU once ported (``sync_guard.runs_on_cpu``) the index is
``i if torch.accelerator.is_available() else None``: ``device_index(i)`` raises without an
accelerator, ``device_index(None)`` switches nothing (on CUDA the same switch).
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families import Family
from patches.generate.codemods.families.idioms_common import CUDA_DEVICE_STR, string_value
from patches.generate.codemods.families.sync_guard import runs_on_cpu
from patches.generate.codemods.families.values import is_index

DEVICE_CONTEXT = "torch.cuda.device"
NEW = "torch.accelerator.device_index"


class DeviceContext(Family):
    name = "device-context"

    def on_call(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs or DEVICE_CONTEXT not in eng.qualnames(original.func):
            return None
        spec = next((s for s in specs if DEVICE_CONTEXT in s.names), None)
        if spec is None:
            return None
        parent = eng.parent(original)
        if not (isinstance(parent, cst.WithItem) and parent.item is original and not parent.asname):
            eng.fail(spec, original, "torch.cuda.device outside a with statement")
            return updated
        args = updated.args
        if (
            len(args) != 1
            or args[0].star
            or (args[0].keyword and args[0].keyword.value != "device")
        ):
            eng.fail(spec, original, "not a single device argument")
            return updated
        value = args[0].value
        text = string_value(value)
        if text is not None:
            m_ = CUDA_DEVICE_STR.fullmatch(text)
            if m_ is None or m_.group(1) is None:
                eng.fail(spec, original, "a device string without an index")
                return updated
            value = cst.Integer(m_.group(1))
        elif not is_index(
            eng.ctx, cst.Module([]).code_for_node(value), eng.line(original.args[0].value)
        ):
            eng.fail(
                spec, original, "the argument may be a torch.device: device_index takes an int"
            )
            return updated
        if runs_on_cpu(eng.ctx, eng.line(original)):
            # a script that runs on the CPU once ported: no device to switch to there
            eng.add_needed_import("torch", node=original)
            value = cst.IfExp(
                test=cst.parse_expression("torch.accelerator.is_available()"),
                body=value,
                orelse=cst.Name("None"),
            )
        eng.done(spec, original)
        return updated.with_changes(
            func=eng.reference(original.func, DEVICE_CONTEXT, NEW), args=[cst.Arg(value)]
        )
