"""``cuda-placement``: a ``.cuda(...)`` placement in a function whose other ``.cuda(...)``
placements stay CUDA (``input = x.cuda(self.rank)``, an index the family does not turn into a
device). What one function places meets: the model a test builds, in a nested class or not, and
the input it calls that model with; a factory's ``device="cuda"`` that stays is a placement too
(lightllm's kernel tests build ``dest_loc = torch.arange(..., device="cuda")`` beside
``src = torch.randn(...).cuda()``, round 41). Moving one to the accelerator (``.cuda(device)`` ->
``.to(device)``) while the other stays on CUDA splits the unit: identical on CUDA, but on another
accelerator the two meet on two devices, and a reviewer reads a half-migrated test. The function
is the outermost one holding the site (a test method and the classes and helpers it defines);
the placements become neutral together or not at all."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import placement_call, plain_cuda, span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-placement"
SUMMARY = "another placement of the same function (`.cuda(...)`) stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    me = placement_call(p.node)
    fn = p.outermost_function
    if me is None or fn is None:
        return []
    for node in ast.walk(fn):
        other = placement_call(node)
        if other is not None and other is not me:
            hits = p.remaining(span_of(other.func), p.own)
        elif isinstance(node, ast.Call):
            places = [k.value for k in node.keywords if k.arg == "device" and plain_cuda(k.value)]
            hits = p.remaining(span_of(places[0]), p.own) if places else []
        else:
            continue
        if hits:
            return first_hit(KIND, hits)
    return []
