"""``class-constant``: the site is a string of a class body (an attribute's value, a dataclass
field's default), evaluated once, when its module is imported. Rewritten, the literal becomes a
probe of the machine run at import (``torch.accelerator.is_available()`` initialises CUDA before
a worker is forked), and a constant becomes whatever the importing machine has: lm_eval's
``EvaluatorConfig.device = "cuda:0"``, a default its tests read back and its help text quotes;
composer's ``DeviceGPU.dist_backend = 'nccl'``, the constant of a class built only with CUDA,
beside its siblings' ``'gloo'``, ``'hccl'`` and ``'xla'``; torch's ``DefaultDeviceType`` in
``torch/utils/checkpoint.py``, which upstream made ``None``, resolved when asked. A lambda's
text runs later, not at import, and a method's parameter default is rewritten to ``None``. Not
about CUDA but safety, so asked only when no kind before it answered, and a site left for it
keeps no other site CUDA."""

from __future__ import annotations

import ast

from patches.generate.intent.probe import Evidence, Probe

KIND = "class-constant"
SUMMARY = "a class attribute's string: rewritten, it would probe the machine at import"
ALONE = True
_VALUES = (ast.Assign, ast.AnnAssign)  # not a method's parameter default: rewritten to None


def detect(p: Probe) -> list[Evidence]:
    node = p.node
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return []
    owner = p.index.parents.get(p.stmt)
    if not isinstance(owner, ast.ClassDef) or not isinstance(p.stmt, _VALUES):
        return []
    if any(isinstance(n, ast.Lambda) for n, _ in p.climb()):
        return []
    return [Evidence(KIND, p.stmt.lineno, f"{owner.name}'s attribute, read at import")]
