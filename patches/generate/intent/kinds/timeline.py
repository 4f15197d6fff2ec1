"""``cuda-timeline``: an event, stream or synchronize (``[timeline]``) in a block whose other
statements call ``torch.cuda.*`` code this run leaves, or a CUDA-only library (``libraries.py``:
cuCIM's transform before MONAI's sync): the work it times or orders stays CUDA's
(events around ``torch.cuda._sleep(...)``), so a neutral event would time nothing. A stream
scope (``with torch.cuda.stream(s):``) orders the work of its own body too, whatever stays CUDA
there (lavis' prefetcher: a project helper that moves the batch with ``.cuda()``). Only calls
count, not names (``cuda_time``), and not ``[timeline] resolvers`` (``_get_device_index``: an
index computed, nothing run). A model placed elsewhere in the function (``model.cuda(rank)``)
is not this block's: ``cuda-device-unit`` asks about the whole function. A definition
in the block (a function, a class, a lambda) runs nothing there: its body runs when it is called,
on that caller's timeline (a module-level ``_streams: dict[int, torch.cuda.Stream]`` is not held by
a function of the module that asks whether a capture is under way)."""

from __future__ import annotations

import ast

from patches.generate.intent.data import calls, timeline_resolvers
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


def _left_on_timeline(p: Probe) -> Hits:
    block = [sub for sub in p.index.block_of(p.stmt) or [] if sub is not p.stmt]
    if isinstance(p.stmt, (ast.With, ast.AsyncWith)):
        block += p.stmt.body  # the site is a context (a stream scope): it orders its body
    for sub in block:
        for c in _run_here(sub):
            if not isinstance(c, ast.Call):
                continue
            lib = p.index.library_hits(span_of(c.func))
            if lib:  # a CUDA-only library's work (MONAI's cuCIM transform before its sync)
                return lib[:1]
            name = qualified(p.ctx, c.func) or ""
            if not name.startswith("torch.cuda.") or span_of(c.func) in p.options.neutral_later:
                continue  # neutral_later: a run with more rules rewrites it
            if name in timeline_resolvers():
                continue  # an index resolver: no work on the timeline
            hits = p.remaining(span_of(c.func), p.own)
            if hits:
                return hits
    if isinstance(p.stmt, (ast.With, ast.AsyncWith)):
        return p.reach(span_of(p.stmt.body), p.own)  # the scope's work, a project helper's too
    return []


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _run_here(stmt: ast.stmt):
    """The nodes of ``stmt`` that run when the block does: not the bodies of definitions."""
    if isinstance(stmt, _DEFINITIONS):
        return
    todo = [stmt]
    while todo:
        n = todo.pop()
        yield n
        todo += [c for c in ast.iter_child_nodes(n) if not isinstance(c, _DEFINITIONS)]
