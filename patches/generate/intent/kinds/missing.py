"""``cuda-missing``: the site is half of an ``and`` chain that asks whether the CUDA device a value
names is missing: a test that the value is CUDA's (``device.type == "cuda"``, ``x.is_cuda``,
``device.startswith("cuda")``) beside a negated CUDA availability check
(``not torch.cuda.is_available()``). It is the fallback for that one device (skorch's
``get_map_location``: a checkpoint saved on CUDA loads on the CPU where there is no CUDA).
Neutral, it asks "is the value any accelerator's, and is there no accelerator at all": a CUDA
checkpoint on a machine with another accelerator skips the fallback and fails to load. Upstream
keeps the chain (``if self.use_device == "cuda" and not torch.cuda.is_available():`` in
``torch/autograd/profiler.py``, 2.4.1 to 2.13.0)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import called
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-missing"
SUMMARY = "the chain asks whether the CUDA device a value names is missing"
AVAILABLE = "torch.cuda.is_available"


def detect(p: Probe) -> list[Evidence]:
    for _, parent in p.climb():
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            names = [v for v in parent.values if _names_cuda(v)]
            missing = [v for v in parent.values if _not_available(p, v)]
            if names and missing:
                what = ast.unparse(names[0])[:40]
                return [Evidence(KIND, p.f.line, f"{what}, where CUDA is not available")]
    return []


def _names_cuda(v: ast.AST) -> bool:
    """``<value> == "cuda"``, ``<value>.is_cuda``, ``<value>.startswith("cuda")``."""
    if isinstance(v, ast.Attribute):
        return v.attr == "is_cuda"
    if isinstance(v, ast.Compare) and len(v.ops) == 1 and isinstance(v.ops[0], ast.Eq):
        return any(
            isinstance(c, ast.Constant) and c.value == "cuda" for c in (v.left, *v.comparators)
        )
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute):
        arg = v.args[0] if len(v.args) == 1 else None
        return v.func.attr == "startswith" and isinstance(arg, ast.Constant) and arg.value == "cuda"
    return False


def _not_available(p: Probe, v: ast.AST) -> bool:
    """``not torch.cuda.is_available()`` (through the file's imports), or the negation of an
    ``and`` chain holding it (``not (torch.cuda.is_available() and torch.cuda.device_count() >
    0)``)."""
    if not (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)):
        return False
    x = v.operand
    terms = x.values if isinstance(x, ast.BoolOp) and isinstance(x.op, ast.And) else [x]
    return any(isinstance(t, ast.Call) and called(p.ctx, t) == AVAILABLE for t in terms)
