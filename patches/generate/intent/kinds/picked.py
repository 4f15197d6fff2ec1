"""``cuda-picked``: a device count beside the block's device pick that stays CUDA's: the count is
how many of the picked devices there are. transformers' ``TrainingArguments._setup_devices``
ends in ``device = torch.device("cuda:0" if torch.cuda.is_available() else
os.environ.get("ACCELERATE_TORCH_DEVICE", "cpu"))`` and ``self._n_gpu =
torch.cuda.device_count()`` (round 28): the pick stays (a CUDA ``set_device`` follows it), and
the count made neutral says N on a machine of N accelerators whose device is the CPU, where
``n_gpu > 1`` wraps the model in ``DataParallel`` and multiplies the batch. A pick is an
assignment, in the same block, to a name that says device; it stays when its value keeps CUDA
work this run leaves."""

from __future__ import annotations

import ast

from patches.generate.intent.bindings import binding_targets
from patches.generate.intent.index import DEVICE_NAME
from patches.generate.intent.nodes import called, span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-picked"
SUMMARY = "a device count beside the block's device pick that stays CUDA-specific"
_COUNT = "torch.cuda.device_count"


def _targets(stmt) -> list[str]:
    """The names and attributes an assignment with a value sets (``bindings.binding_targets``)."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return []
    return [
        t.id if isinstance(t, ast.Name) else t.attr
        for t, _ in binding_targets(stmt)
        if isinstance(t, (ast.Name, ast.Attribute))
    ]


def detect(p: Probe) -> list[Evidence]:
    if called(p.ctx, p.node) != _COUNT:
        return []
    block = p.index.block_of(p.stmt) or []
    for sib in block:
        if sib is p.stmt or not any(DEVICE_NAME.fullmatch(t) for t in _targets(sib)):
            continue
        hits = p.remaining(span_of(sib.value), p.own)
        if hits:
            line, what = hits[0]
            return [Evidence(KIND, line, f"{_targets(sib)[0]} = ... {what} (line {line})")]
    return []
