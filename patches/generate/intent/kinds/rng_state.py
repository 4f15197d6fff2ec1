"""``cuda-rng-state``: the site seeds CUDA's generator (``torch.cuda.manual_seed(s)``) in a
function that also saves or restores CUDA's generator state by code that stays CUDA
(``state = torch.cuda.get_rng_state()`` ... ``torch.cuda.set_rng_state(state)``: colossalai's
seed manager records a seeded state per parallel mode and puts the old one back). Made neutral,
``torch.manual_seed`` also reseeds the CPU and every other device, which the CUDA restore never
undoes: after it the CPU generator differs per rank. The seed and the state change together or
not at all (round 32). Also where the function hands the seed to a method of this file's that
does the saving (a tracker of seeded states)."""

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
    return _tracked(p)


def _tracked(p: Probe) -> list[Evidence]:
    """The function calls a method of an object (``_CUDA_RNG_STATE_TRACKER.add(name, seed)``)
    that a class of this file defines by that name and whose body saves or restores CUDA's
    state (Megatron's ``model_parallel_cuda_manual_seed`` seeds CUDA, then each tracker entry
    records ``torch.cuda.get_rng_state()`` and puts the old one back, round 39)."""
    methods: dict[str, list[ast.AST]] = {}
    for cls in p.ctx.tree.body:
        for m in cls.body if isinstance(cls, ast.ClassDef) else ():
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.setdefault(m.name, []).append(m)
    for n in ast.walk(p.functions[0]):
        f = n.func if isinstance(n, ast.Call) else None
        if not (isinstance(f, ast.Attribute) and getattr(f.value, "id", "") not in ("self", "cls")):
            continue
        for m in methods.get(f.attr, ()):
            for c in ast.walk(m):
                if isinstance(c, ast.Call) and called(p.ctx, c) in _STATES:
                    if p.remaining(span_of(c), p.own):
                        return [
                            Evidence(
                                KIND, n.lineno, f"{f.attr}() saves CUDA's state (line {c.lineno})"
                            )
                        ]
    return []
