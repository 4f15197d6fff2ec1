"""``cuda-timeline``: an event, stream or synchronize (``[timeline]``) in a block whose other
statements call ``torch.cuda.*`` code this run leaves (or a block enclosing it, up to its
function, sets the device or stream with a call this run leaves: ``set_device(rank)`` above the
``with``/``for`` the sync sits in): the work it times or orders stays CUDA's
(events around ``torch.cuda._sleep(...)``), so a neutral event would time nothing. Only calls
count, not names (``cuda_time``); a model placed elsewhere in the function (``model.cuda(rank)``)
does not: the sync of the current device is what the code means on any accelerator."""

from __future__ import annotations

import ast

from patches.generate.intent.data import calls
from patches.generate.intent.index import Hits
from patches.generate.intent.nodes import called, qualified, span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-timeline"
SUMMARY = (
    "an event, stream or synchronize in a block whose other calls stay CUDA-specific on the "
    "same timeline"
)


def detect(p: Probe) -> list[Evidence]:
    if called(p.ctx, p.node) not in calls("timeline"):
        return []
    return first_hit(KIND, _left_on_timeline(p))


def _blocks(p: Probe):
    """(block, the statement of it that holds the site) from the site's own block up to its
    function's body: a set device or a CUDA call of an enclosing block is on the same timeline
    as a sync nested in a ``with``/``for``/``if`` below it."""
    n = p.stmt
    while n is not None:
        block = p.index.block_of(n)
        if block is None:
            return
        yield block, n
        parent = p.index.parents.get(n)
        if parent is None or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        while parent is not None and not isinstance(parent, ast.stmt):
            parent = p.index.parents.get(parent)
        n = parent


def _left_on_timeline(p: Probe) -> Hits:
    for level, (block, holder) in enumerate(_blocks(p)):
        # the site's own block: any CUDA call; an enclosing one: a call that sets the device or
        # stream the site then works on (``[state]``)
        only = None if level == 0 else calls("state")
        hits = _left_in(p, [sub for sub in block if sub is not holder], only)
        if hits:
            return hits
    return []


def _left_in(p: Probe, stmts, only) -> Hits:
    for sub in stmts:
        for c in ast.walk(sub):
            if not isinstance(c, ast.Call):
                continue
            name = qualified(p.ctx, c.func) or ""
            if only is not None and name not in only:
                continue
            if not name.startswith("torch.cuda.") or span_of(c.func) in p.options.neutral_later:
                continue  # neutral_later: a run with more rules rewrites it
            hits = p.remaining(span_of(c.func), p.own)
            if hits:
                return hits
    return []
