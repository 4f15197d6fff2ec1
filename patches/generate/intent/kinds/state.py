"""``cuda-state``: the site sets the current device or stream (``[state]``) and the code after
it in the same block stays CUDA (``torch.cuda.set_device(rank)`` then ``model.cuda(rank)``), also
one call away (``self._make_model()`` whose body calls ``.cuda()``): the state it sets is for
that code, so the two change together or not at all."""

from __future__ import annotations

from patches.generate.intent.data import calls
from patches.generate.intent.nodes import called, span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-state"
SUMMARY = "the device or stream it sets is used by code that stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    if called(p.ctx, p.node) not in calls("state"):
        return []
    after = p.index.after(p.stmt)
    return first_hit(KIND, p.reach(span_of(after), p.own)) if after else []
