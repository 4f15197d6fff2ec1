"""``cuda-comprehension``: the comprehension the site iterates over (``[torch.cuda.get_device_name(i) for i in range(n)]``) still uses CUDA-only APIs on the devices it counts. Also one same-file call deep."""

from __future__ import annotations

from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-comprehension"
SUMMARY = "the comprehension stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    return [
        e
        for kind, spans in p.guarded
        if kind == KIND
        for sp in spans
        for e in first_hit(KIND, p.reach(sp, p.own))
    ]
