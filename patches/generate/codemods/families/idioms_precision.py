"""Precision flags (HN411): ``torch.backends.cuda.matmul.allow_tf32 = True`` ->
``torch.set_float32_matmul_precision("high")`` (``False`` -> ``"highest"``).

torch 2.13: on CUDA the two are the same switch (``set_float32_matmul_precision`` documents
"high" as equivalent to ``allow_tf32 = True``; both set
``torch.backends.cuda.matmul.fp32_precision``). The neutral call also sets the oneDNN (CPU)
matmul precision to tf32, which only CPUs with TF32 matmul hardware use (none of ours: CPU
results are bit-identical, checked by the e2e test) and lets other backends read the intent.

Left, with a reason: ``torch.backends.cudnn.allow_tf32`` (convolutions only; the neutral
``torch.backends.fp32_precision`` would switch matmuls too, so nothing neutral equals it),
a value that is not a literal True/False, and any read of the flag.
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import specs_at

MATMUL = "torch.backends.cuda.matmul.allow_tf32"
CUDNN = "torch.backends.cudnn.allow_tf32"
_LEVEL = {"True": "high", "False": "highest"}


class Precision(Family):
    name = "precision"

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.Assign) or len(original.targets) != 1:
            return None
        target = original.targets[0].target
        names = eng.qualnames(target)
        specs = specs_at(eng, original, self.name)
        if not specs or not names & {MATMUL, CUDNN}:
            return None
        spec = specs[0]
        if CUDNN in names:
            eng.fail(
                spec,
                original,
                "cuDNN convolutions only: torch.backends.fp32_precision would switch matmuls too",
            )
            return None
        value = original.value
        if not (isinstance(value, cst.Name) and value.value in _LEVEL):
            eng.fail(spec, original, "not a literal True/False")
            return None
        eng.remove_unused_import_by_node(target)
        eng.add_needed_import("torch", node=original)
        eng.done(spec, original)
        return cst.Expr(
            cst.parse_expression(f'torch.set_float32_matmul_precision("{_LEVEL[value.value]}")')
        )
