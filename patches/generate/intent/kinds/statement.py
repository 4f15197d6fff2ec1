"""``cuda-statement``: the rest of the site's own statement (the header of a compound one) stays
CUDA-specific (``current_stream(f"cuda:{i}")``, ``torch.cuda.current_stream().cuda_stream`` while
``.cuda_stream`` stays): half a statement neutral is no neutral statement."""

from __future__ import annotations

from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-statement"
SUMMARY = "the rest of the statement stays CUDA-specific"


def detect(p: Probe) -> list[Evidence]:
    unit = p.index.statement_span(p.top, p.stmt)
    return first_hit(KIND, p.remaining(unit, p.own))
