"""``cuda-chain``: the other operands of its boolean chain (``torch.cuda.is_available() and torch.backends.cudnn.enabled``) still use CUDA-only APIs: the chain asks about CUDA as a whole. Also one same-file call deep."""

from __future__ import annotations

from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-chain"
SUMMARY = "the rest of the boolean chain stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    return [
        e
        for kind, spans in p.guarded
        if kind == KIND
        for sp in spans
        for e in first_hit(KIND, p.collective_free(p.reach(sp, p.own)))
    ]
