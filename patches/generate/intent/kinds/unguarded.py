"""``unguarded``: a plain rename of a ``guard: true`` rule (``empty_cache``: a no-op without CUDA,
the neutral one raises without an accelerator) with no availability check around the site: an
enclosing test, an earlier operand of its ``and`` chain, or an earlier ``if not ...: return`` of
its block that names ``is_available`` (an imported alias of it too), a ``TEST_*`` gate or a device
count (``intent.counts``: ``if n_gpu:``, ``for i in range(n_gpu):``). Not
about CUDA but safety, so asked only when no kind before it answered, and a site left for it
keeps no other site CUDA."""

from __future__ import annotations

import ast

from patches.generate.intent.counts import count_names, count_test, counted_loop
from patches.generate.intent.nodes import exits
from patches.generate.intent.probe import Evidence, Probe

KIND = "unguarded"
SUMMARY = (
    "the neutral API raises without an accelerator where CUDA's did not, and nothing checks for "
    "one first"
)
NEEDS_NODE = False
ALONE = True


def detect(p: Probe) -> list[Evidence]:
    if p.f.rule not in p.options.unguarded or checked(p):
        return []
    return [Evidence(KIND, p.f.line, "no is_available() check around it")]


def _checks(test, p: Probe) -> bool:
    """``test`` names ``is_available`` (or a ``TEST_*`` gate), directly or through an imported
    alias (``from torch.cuda import is_available as cuda_available``), or tests a device count."""
    if count_test(test, count_names(p.ctx.tree)) is not None:
        return True
    for x in ast.walk(test):
        if isinstance(x, ast.Attribute) and x.attr == "is_available":
            return True
        if isinstance(x, ast.Name) and (
            x.id.startswith("TEST_")
            or (p.ctx.qualify(x.lineno, x.id) or "").endswith(".is_available")
        ):
            return True
    return False


def checked(p: Probe) -> bool:
    """An availability check around the site: an enclosing test, an earlier operand of its
    ``and`` chain, an earlier ``if not ...: return`` of its block, a loop over a device count."""
    n, it = p.node, p.index
    counts = count_names(it.ctx.tree)
    while n is not None:
        parent = it.parents.get(n)
        if counted_loop(parent, counts) and n in parent.body:
            return True
        if (
            isinstance(parent, (ast.If, ast.While, ast.IfExp))
            and n is not parent.test
            and _checks(parent.test, p)
        ):
            return True
        if isinstance(parent, ast.BoolOp) and any(
            _checks(v, p) for v in parent.values[: parent.values.index(n)]
        ):
            return True
        if isinstance(n, ast.stmt):
            block = it.block_of(n) or []
            for prev in block[: block.index(n)] if n in block else []:
                if isinstance(prev, ast.If) and exits(prev.body) and _checks(prev.test, p):
                    return True
        n = parent
    return False
