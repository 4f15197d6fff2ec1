"""``cuda-loop``: the body of the loop the site iterates over (``for i in range(torch.cuda.device_count()):``) still uses CUDA-only APIs on the devices it counts. Also one same-file call deep."""

from __future__ import annotations

from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-loop"
SUMMARY = "the loop body stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    return [
        e
        for kind, spans in p.guarded
        if kind == KIND
        for sp in spans
        for e in first_hit(KIND, p.reach(sp, p.own))
    ]
