"""``cuda-guarded``: the code the site guards (an ``if``/``while`` body and its else, an ``IfExp`` branch, a decorated definition, the rest of the block after an ``assert`` or an early ``if not ...: return``) still uses CUDA-only APIs: the guard asks for what that code needs. Also one same-file call deep."""

from __future__ import annotations

from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-guarded"
SUMMARY = "the code it guards stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    return [
        e
        for kind, spans in p.guarded
        if kind == KIND
        for sp in spans
        for e in first_hit(KIND, p.reach(sp, p.own))
    ]
