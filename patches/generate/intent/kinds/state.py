"""``cuda-state``: the site sets the current device or stream (``[state]``) and the code after
it in the same block stays CUDA (``torch.cuda.set_device(rank)`` then ``model.cuda(rank)``), also
one call away (``self._make_model()`` whose body calls ``.cuda()``): the state it sets is for
that code, so the two change together or not at all. A context manager that sets the state
(``with torch.cuda.device("cuda:0"):``) sets it for its body: a body that stays CUDA (CUDA
streams, ``torch.cuda._sleep``) keeps it; and code inside a context that stays CUDA's (``with
torch.cuda.stream(s):`` ... ``torch.zeros(100, device="cuda:0")``) runs on CUDA's device and
stream: a neutral device there would not be the one the context sets. So does code inside the
device context of a CUDA-only library (``with cp.cuda.Device(i):``, ``libraries.py``)."""

from __future__ import annotations

import ast

from patches.generate.intent.data import calls
from patches.generate.intent.nodes import called, span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-state"
SUMMARY = "the device or stream it sets is used by code that stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    if called(p.ctx, p.node) not in calls("state"):
        return _inside(p)
    stmt = p.stmt
    spans = []
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(
        any(x is p.node for x in ast.walk(item.context_expr)) for item in stmt.items
    ):
        spans.append(span_of(stmt.body))
    after = p.index.after(stmt)
    if after:
        spans.append(span_of(after))
    for sp in spans:
        hits = first_hit(KIND, p.reach(sp, p.own))
        if hits:
            return hits
    return []


def _inside(p: Probe) -> list[Evidence]:
    """The site is in the body of a ``with`` whose context sets CUDA's device or stream
    (``[state]``, ``[timeline]`` calls) and stays CUDA. Not a sync, event or stream itself: that
    is judged by its own block (``cuda-timeline``; upstream's ``torch.accelerator.synchronize()``
    inside a ``with torch.cuda.device(i):`` that stays syncs the device the context sets)."""
    if called(p.ctx, p.node) in calls("timeline"):
        return []
    n = p.node
    sets = calls("state") | calls("timeline")
    while n is not None:
        parent = p.index.parents.get(n)
        if isinstance(parent, (ast.With, ast.AsyncWith)) and n in parent.body:
            for item in parent.items:
                ctx = item.context_expr
                used = p.index.library_hits(span_of(ctx))
                if used:  # `with cp.cuda.Device(i):`: the device of a CUDA-only library
                    return first_hit(KIND, used)
                if isinstance(ctx, ast.Call) and called(p.ctx, ctx) in sets:
                    hits = p.remaining(span_of(ctx.func), p.own)
                    if hits:
                        return first_hit(KIND, hits)
        n = parent
    return []
