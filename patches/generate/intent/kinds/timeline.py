"""``cuda-timeline``: an event, stream or synchronize (``[timeline]``) in a block whose other
statements call ``torch.cuda.*`` code this run leaves: the work it times or orders stays CUDA's
(events around ``torch.cuda._sleep(...)``), so a neutral event would time nothing. Only calls
count, not names (``cuda_time``), and not ``[timeline] resolvers`` (``_get_device_index``: an
index computed, nothing run); a model placed elsewhere in the function (``model.cuda(rank)``)
does not: the sync of the current device is what the code means on any accelerator."""

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
    for sub in p.index.block_of(p.stmt) or []:
        if sub is p.stmt:
            continue
        for c in ast.walk(sub):
            if not isinstance(c, ast.Call):
                continue
            name = qualified(p.ctx, c.func) or ""
            if not name.startswith("torch.cuda.") or span_of(c.func) in p.options.neutral_later:
                continue  # neutral_later: a run with more rules rewrites it
            if name in timeline_resolvers():
                continue  # an index resolver: no work on the timeline
            hits = p.remaining(span_of(c.func), p.own)
            if hits:
                return hits
    return []
