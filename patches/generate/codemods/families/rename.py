"""``rename``: a test-harness identifier for its generic form (``TEST_CUDA``, ``@onlyCUDA``)."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ExpressionContext

from patches.generate.codemods.families.base import Family

# docs/patches.md, "What stays CUDA": cuDNN and CUDA-graph gates are CUDA-specific on purpose.
CUDA_SPECIFIC_GATES = ("CUDNN", "CUDA_GRAPH")
_HARNESS = ("torch.testing.", "torch._dynamo.testing.", "torch._inductor.")


class Rename(Family):
    """A test-harness identifier for its generic form: ``TEST_CUDA`` -> ``TEST_ACCELERATOR``,
    ``@onlyCUDA`` -> ``@onlyAccelerator``, ``common_utils.TEST_MULTIGPU`` -> ``...MULTIACCELERATOR``.
    Definitions (``TEST_CUDA = ...`` in the file itself) are left alone.
    """

    name = "rename"

    def on_ref(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        if isinstance(original, cst.Name):
            if eng.is_attr_name(original) or eng.expr_context(original) != ExpressionContext.LOAD:
                return None
            ident = original.value
        elif isinstance(original, cst.Attribute):
            ident = original.attr.value
        else:
            return None
        for spec in specs:
            if ident not in spec.names:
                continue
            if any(tag in ident for tag in CUDA_SPECIFIC_GATES):
                eng.fail(spec, original, f"{ident} is a CUDA-specific gate on purpose")
                return None
            if isinstance(original, cst.Name) and eng.defined_locally(original):
                eng.fail(spec, original, f"{ident} is defined in this file")
                return None
            new = spec.new_for(ident)
            if new.rsplit(".", 1)[0] == eng.module_name:
                eng.fail(spec, original, f"this module defines {new.rsplit('.', 1)[1]}")
                return None
            if isinstance(original, cst.Attribute):
                # `mod.TEST_CUDA`: only a receiver we can resolve says where the new name lives.
                receiver = eng.qualnames(original.value)
                if not receiver:
                    eng.fail(spec, original, "cannot resolve the module it is read from")
                    return None
                old = f"{sorted(receiver)[0]}.{ident}"
            else:
                quals = sorted(q for q in eng.qualnames(original) if q.endswith("." + ident))
                old = quals[0] if quals else ident
            if "." in old and not old.startswith(_HARNESS):
                # gptqmodel's own `from .torch import HAS_CUDA` (round 38): the project's flag,
                # whose module torch's test harness is not
                eng.fail(spec, original, f"{ident} is {old}, not torch's test harness")
                return None
            eng.done(spec, original)
            return eng.reference(original, old, new, bare=True)
        return None
