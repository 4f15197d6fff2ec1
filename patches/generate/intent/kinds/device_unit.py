"""``cuda-device-unit``: a call that binds the function's work to a device (``[binding] calls``:
set the current device, read it, synchronize it) or a ``.cuda(...)`` placement, in a function that
keeps other CUDA work: a ``torch.cuda.*`` call or a ``.cuda(...)`` placement that this run leaves
(not a question about the devices, a current device or stream chosen, an index resolved: they run
nothing). The function is the outermost one holding the site (a test method and the helpers and
classes it defines), as for ``cuda-placement``. ``torch.cuda.synchronize(rank)`` beside
``model.cuda(rank)`` that stays: on CUDA the rewrite changes nothing, on another accelerator the
function still fails at its CUDA work, and the patch reads as a half-migrated test. Upstream
ports such a function whole: each of the 59 bindings and placements it neutralised between 2.4.1
and 2.14.1 sits in a function that runs no CUDA work after the change, while 148 of the 224 it
kept sit beside other CUDA work (``tests/benchmarks/replay_units.py``). A CUDA call left only as
a repeat to delete by hand (``redundant``) is no work that stays. What a profiler records about
the function's work (``[binding] selections``: its activity, the device type its events are
filtered by) is judged the same way: ``fp8_bench`` keeps CUDA events and NVTX ranges, so its
``ProfilerActivity.CUDA`` stays (upstream kept the whole function through 2.14.1)."""

from __future__ import annotations

import ast

from patches.generate.intent.data import calls, data, no_work_calls
from patches.generate.intent.index import Hits
from patches.generate.intent.nodes import called, placement_call, qualified, span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-device-unit"
SUMMARY = "a device binding in a function whose other CUDA work stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    fn = p.outermost_function
    if fn is None or not (
        called(p.ctx, p.node) in calls("binding")
        or _placement(p.node)
        or p.f.rule in data()["binding"]["selections"]
    ):
        return []
    return first_hit(KIND, _left_in(p, fn))


def _placement(node) -> bool:
    """``x.cuda(...)``, or its ``.cuda`` attribute where a finding sits on that."""
    return placement_call(node) is not None or (
        isinstance(node, ast.Attribute) and node.attr == "cuda"
    )


def _left_in(p: Probe, fn: ast.AST) -> Hits:
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call) or node is p.node or node.func is p.node:
            continue
        span = _cuda_work(p, node)
        if span is None or span in p.options.neutral_later:
            continue  # neutral_later: a run with more rules rewrites it
        hits = p.remaining(span, p.own)
        if hits:
            return hits
    return []


def _cuda_work(p: Probe, call: ast.Call):
    """The span of ``call``'s callee when it is CUDA work: ``x.cuda(...)`` or ``torch.cuda.*``
    (less ``no_work_calls``); else None."""
    if placement_call(call) is not None:
        return span_of(call.func)
    name = qualified(p.ctx, call.func) or ""
    if not name.startswith("torch.cuda.") or name in no_work_calls():
        return None
    return span_of(call.func)
