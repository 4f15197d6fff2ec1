"""``cuda-rng-state``: the site seeds CUDA's generator (``torch.cuda.manual_seed(s)``) in a
function that also saves or restores CUDA's generator state by code that stays CUDA
(``state = torch.cuda.get_rng_state()`` ... ``torch.cuda.set_rng_state(state)``: colossalai's
seed manager records a seeded state per parallel mode and puts the old one back). Made neutral,
``torch.manual_seed`` also reseeds the CPU and every other device, which the CUDA restore never
undoes: after it the CPU generator differs per rank. The seed and the state change together or
not at all (round 32)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import called, span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-rng-state"
SUMMARY = "it seeds CUDA's generator whose state the same function saves or restores in CUDA"

_SEEDS = frozenset(
    f"torch.cuda.{m}{name}"
    for m in ("", "random.")
    for name in ("manual_seed", "manual_seed_all", "seed", "seed_all")
)
_STATES = frozenset(
    f"torch.cuda.{m}{name}"
    for m in ("", "random.")
    for name in ("get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all")
)


def detect(p: Probe) -> list[Evidence]:
    if called(p.ctx, p.node) not in _SEEDS or not p.functions:
        return []
    for n in ast.walk(p.functions[0]):
        if isinstance(n, ast.Call) and called(p.ctx, n) in _STATES:
            hits = first_hit(KIND, p.remaining(span_of(n), p.own))
            if hits:
                return hits
    return []
