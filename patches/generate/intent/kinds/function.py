"""``cuda-function``: an enclosing function or class is about CUDA.

Its name says CUDA (``has_cuda_pallas``; ``CUDATestBase``, whose ``device_type = "cuda"`` must stay
CUDA's), its docstring's summary (first sentence) is about CUDA ("Checks for a full Pallas-on-CUDA
environment"), or a decorator registers it for CUDA-only code (``@register(..., "cuda")`` while
that stays): the function is CUDA's, whatever it calls. The one name this keeps that upstream
neutralised anyway is ``CUDABenchmarkRequest``'s (the replay: 3 sites, 1 of them in upstream's
form), against 2 wrong rewrites in ``CUDATestBase`` without it."""

from __future__ import annotations

import ast

from patches.generate.intent.data import about_cuda_summary, is_cuda_word
from patches.generate.intent.nodes import span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-function"
SUMMARY = "the enclosing function or class is about CUDA"


def detect(p: Probe) -> list[Evidence]:
    for d in p.defs:
        decorated = [
            a
            for dec in d.decorator_list
            if isinstance(dec, ast.Call)
            for a in [*dec.args, *(k.value for k in dec.keywords)]
        ]
        hits = [h for a in decorated for h in p.remaining(span_of(a), p.own)]
        if hits:
            return [Evidence(KIND, d.lineno, f"{d.name} is registered for {hits[0][1]}")]
        if is_cuda_word(d.name):
            return [Evidence(KIND, d.lineno, f"inside {d.name}")]
        doc = ast.get_docstring(d, clean=False)
        if doc and about_cuda_summary(doc):
            line = doc.strip().split("\n")[0][:60]
            return [Evidence(KIND, d.lineno, f"{d.name}: {line!r}")]
    return []
