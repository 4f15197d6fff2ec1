"""``cuda-placement``: a ``.cuda(...)`` placement in a function whose other ``.cuda(...)``
placements stay CUDA (``input = x.cuda(self.rank)``, an index the family does not turn into a
device). What one function places meets: the model a test builds, in a nested class or not, and
the input it calls that model with. Moving one to the accelerator (``.cuda(device)`` ->
``.to(device)``) while the other stays on CUDA splits the unit: identical on CUDA, but on another
accelerator the two meet on two devices, and a reviewer reads a half-migrated test. The function
is the outermost one holding the site (a test method and the classes and helpers it defines);
the placements become neutral together or not at all."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-placement"
SUMMARY = "another placement of the same function (`.cuda(...)`) stays CUDA-specific"


def _placement(node) -> ast.Call | None:
    """The ``x.cuda(...)`` call ``node`` is (or whose ``.cuda`` attribute it is), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node if node.func.attr == "cuda" else None
    return None


def detect(p: Probe) -> list[Evidence]:
    me = _placement(p.node)
    if me is None:
        return []
    funcs = [d for d in p.defs if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not funcs:
        return []
    for node in ast.walk(funcs[-1]):
        other = _placement(node)
        if other is None or other is me:
            continue
        hits = p.remaining(span_of(other.func), p.own)
        if hits:
            return first_hit(KIND, hits)
    return []
