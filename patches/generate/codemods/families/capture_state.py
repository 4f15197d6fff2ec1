"""Whether the current stream is capturing a graph (HN216 ``torch.cuda.is_current_stream_capturing()``)
-> the current accelerator stream's own answer::

    if torch.cuda.is_current_stream_capturing():   ->   if (torch.accelerator.is_available()
                                                            and torch.accelerator.current_stream().is_capturing()):

``torch.Stream.is_capturing()`` is the device-generic query (torch 2.13 has it); on a CUDA
machine the current accelerator stream is CUDA's current stream, so it is the same question.
``torch.accelerator.current_stream()`` raises without an accelerator, where CUDA's answer is
False, so the query is guarded by ``torch.accelerator.is_available()`` (unless an ``and`` chain
already starts with an availability check). Upstream's shape (symmetric memory's workspace,
torch 2.14). Behaviour is the same on CUDA and on a CPU-only machine, so the gate alone decides
where it is rewritten.
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_capability import _guarded
from patches.generate.codemods.families.idioms_common import after_availability, specs_at

CAPTURING = "torch.cuda.is_current_stream_capturing"
_QUERY = "torch.accelerator.current_stream().is_capturing"


class CaptureState(Family):
    name = "capture-state"

    def on_call(self, eng, original, updated):
        if eng.qualnames(original.func) != {CAPTURING}:
            return None
        specs = specs_at(eng, original, self.name, (CAPTURING,))
        if not specs:
            return None
        if original.args:
            eng.fail(specs[0], original, "an argument: the accelerator's query takes none")
            return None
        eng.remove_unused_import_by_node(original.func)
        eng.add_needed_import("torch", node=original)
        eng.done(specs[0], original)
        call = updated.with_changes(func=cst.parse_expression(_QUERY))
        if after_availability(eng, original):
            return call
        guarded = _guarded(call)
        parent = eng.parent(original)
        if isinstance(parent, (cst.If, cst.While)) and parent.test is original:
            return guarded.with_changes(lpar=[], rpar=[])
        return guarded
