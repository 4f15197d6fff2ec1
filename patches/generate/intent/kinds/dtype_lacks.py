"""``dtype-lacks``: the site is in a CUDA-or-CPU device pick (``"cuda" if
torch.cuda.is_available() else "cpu"``) whose unit computes in a dtype an in-tree accelerator
lacks (``torch.mps`` has no float64: ``[modules] dtype_lacks``). Rewritten, the pick names the
current accelerator, and on a Mac that is MPS: loading or moving the float64 model there raises
``TypeError: Cannot convert a MPS Tensor to float64 dtype`` where the original picked the CPU and
ran (MACE's ``mace_off(default_dtype="float64")`` and ``mace_torchsim``'s ``dtype=torch.float64``,
a test module whose runs train in float64, round 41). The unit is the outermost function holding
the pick (its parameters' defaults too), or the module for a pick at module level, which every
function of the module reads. A pick with no CPU arm failed on a Mac before as well.

Safety, not CUDA intent: asked only when no kind before it answered, once the others settled."""

from __future__ import annotations

import ast

from patches.generate.intent.data import data
from patches.generate.intent.probe import Evidence, Probe

KIND = "dtype-lacks"
LATE = True
ALONE = True
SUMMARY = "a device pick that fell back to the CPU, for work in a dtype an accelerator lacks"


def detect(p: Probe) -> list[Evidence]:
    if p.cpu_pick is None:
        return []
    unit = p.outermost_function or p.ctx.tree
    for accelerator, dtypes in data()["modules"]["dtype_lacks"].items():
        hit = _computes_in(unit, frozenset(dtypes))
        if hit is not None:
            line, name = hit
            why = f"{accelerator} has no {name} (line {line}); the CUDA pick fell back to the CPU"
            return [Evidence(KIND, line, why)]
    return []


def _computes_in(unit: ast.AST, dtypes: frozenset[str]) -> tuple[int, str] | None:
    """The first ``torch.<dtype>``, ``"<dtype>"`` or ``.double()`` of the unit, as (line,
    dtype), or None."""
    for node in ast.walk(unit):
        name = None
        if isinstance(node, ast.Attribute) and node.attr in dtypes:
            if isinstance(node.value, ast.Name) and node.value.id == "torch":
                name = node.attr
        elif isinstance(node, ast.Constant) and node.value in dtypes:
            name = node.value
        elif isinstance(node, ast.Call) and not node.args and not node.keywords:
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "double" and "double" in dtypes:
                name = "double"
        if name is not None:
            return node.lineno, name
    return None
