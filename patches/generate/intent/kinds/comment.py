"""``cuda-comment``: a comment line in the site's statement header, or in the comment block
right above it, names a CUDA-only library or feature ("the cuSolver backend returns V^H", "also
makes sure this is CUDA or HIP", "NCCL style coalescing"): the author said the code works around
or serves that feature. A comment that only calls the device "cuda" ("Inputs always cuda", "we
only care for cuda tensors") names the device the code was written on, and upstream neutralises
such code like any other. Trailing comments are tags more often than explanations: not read."""

from __future__ import annotations

from patches.generate.intent.data import about_cuda_feature
from patches.generate.intent.nodes import compound
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-comment"
SUMMARY = "the comment at the site is about CUDA"


def detect(p: Probe) -> list[Evidence]:
    stmt, comments = p.stmt, p.index.comments
    if not hasattr(stmt, "lineno"):
        return []
    first = stmt.lineno
    hdr_end = stmt.body[0].lineno - 1 if compound(stmt) and stmt.body else stmt.end_lineno
    lines = list(range(first, hdr_end + 1))
    above = first - 1
    while above in comments and comments[above][1]:
        lines.append(above)
        above -= 1
    for ln in sorted(lines):
        text, alone = comments.get(ln, ("", False))
        if text and alone and about_cuda_feature(text):
            return [Evidence(KIND, ln, repr(text[:60]))]
    return []
