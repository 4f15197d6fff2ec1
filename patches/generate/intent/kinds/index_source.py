"""``cuda-index``: an indexed device (``torch.device("cuda", i)``, ``f"cuda:{i}"``) whose index
is a name its function binds from a ``torch.cuda`` call that stays CUDA's (``i =
torch.cuda.current_device()``, left where the project's tests mock it): the device's type and
its index come from one API or the device is half ported, and the tests that stand in for CUDA's
index now meet the accelerator's type (unsloth-zoo's Triton allocator, round 38)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import called, span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-index"
SUMMARY = "its index comes from a CUDA call that stays CUDA's"


def detect(p: Probe) -> list[Evidence]:
    name = _index_name(p)
    fn = p.functions[0] if p.functions else None
    if name is None or fn is None:
        return []
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Assign) and n.lineno < p.f.line):
            continue
        if not any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            continue
        if isinstance(n.value, ast.Call) and (called(p.ctx, n.value) or "").startswith(
            "torch.cuda."
        ):
            hits = first_hit(KIND, p.remaining(span_of(n.value.func), p.own))
            if hits:
                return hits
    return []


def _index_name(p: Probe) -> str | None:
    """The plain name that indexes the device at the site, else None."""
    n = p.node
    for node in (n, p.index.parents.get(n)):
        if isinstance(node, ast.Call) and called(p.ctx, node) == "torch.device":
            if len(node.args) == 2 and isinstance(node.args[1], ast.Name):
                return node.args[1].id
        if isinstance(node, ast.JoinedStr) and len(node.values) == 2:
            head, value = node.values
            if isinstance(head, ast.Constant) and head.value == "cuda:":
                if isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name):
                    return value.value.id
    return None
