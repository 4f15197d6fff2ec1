"""``cuda-loop``: the body of the loop the site iterates over (``for i in range(torch.cuda.device_count()):``) still uses CUDA-only APIs on the devices it counts. Also one same-file call deep. And the other way round: the site reads the variable of a loop over CUDA's devices that stays (``for i in range(torch.cuda.device_count()): register(f"cuda:{i}", CudaInterface)``): it names CUDA's device ``i``, and a neutral type would pair another accelerator with CUDA's count."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import span_of
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
    ] or _in_cuda_loop(p)


def _in_cuda_loop(p: Probe) -> list[Evidence]:
    """The expression holding the site (its statement's header, for a compound one) reads the
    target of an enclosing ``for`` whose iterable stays CUDA."""
    used: set[str] | None = None  # the names it reads: walked only inside a loop (a site of a
    # module-level table would walk the whole table, once per site)
    n = p.stmt
    while n is not None and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = p.index.parents.get(n)
        if isinstance(parent, ast.For) and n in parent.body:
            if used is None:
                used = {x.id for x in ast.walk(p.top) if isinstance(x, ast.Name)}
            targets = {t.id for t in ast.walk(parent.target) if isinstance(t, ast.Name)}
            if targets & used:
                hits = p.remaining(span_of(parent.iter), p.own)
                if hits:
                    return first_hit(KIND, hits)
        n = parent
    return []
