"""``cuda-check``: an explicit device-type comparison with a CUDA string
(``x.device.type == "cuda"``) in a tree whose code handles each backend itself (``[checks]``:
PyTorch's own), where asking for CUDA by name is deliberate."""

from __future__ import annotations

import ast

from patches.generate.intent.data import deliberate_check_trees
from patches.generate.intent.nodes import CUDA_DEVICE_STR, tree_path
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-check"
SUMMARY = "an explicit device-type check in code that handles each backend itself"


def _cuda_string(x) -> bool:
    return (
        isinstance(x, ast.Constant)
        and isinstance(x.value, str)
        and bool(CUDA_DEVICE_STR.fullmatch(x.value))
    )


def detect(p: Probe) -> list[Evidence]:
    path = tree_path(p.ctx)
    if not any(path.startswith(t) for t in deliberate_check_trees()):
        return []
    n = p.node
    while n is not None and not isinstance(n, ast.stmt):
        if isinstance(n, ast.Compare):
            if any(_cuda_string(x) for x in [n.left, *n.comparators]):
                return [Evidence(KIND, p.f.line, "compares a device type with CUDA")]
            return []
        n = p.index.parents.get(n)
    return []
