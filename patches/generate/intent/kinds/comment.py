"""``cuda-comment``: a comment line in the site's statement header, or in the comment block
right above it, names a CUDA-only library or feature ("the cuSolver backend returns V^H", "also
makes sure this is CUDA or HIP", "NCCL style coalescing"): the author said the code works around
or serves that feature. A comment that only calls the device "cuda" ("Inputs always cuda", "we
only care for cuda tensors") names the device the code was written on, and upstream neutralises
such code like any other. Trailing comments are tags more often than explanations: not read."""

from __future__ import annotations

from patches.generate.intent.comments import block_above, header_end
from patches.generate.intent.data import about_cuda_feature
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-comment"
SUMMARY = "the comment at the site is about CUDA"


def detect(p: Probe) -> list[Evidence]:
    stmt, comments = p.stmt, p.index.comments
    if not hasattr(stmt, "lineno"):
        return []
    lines = [*range(stmt.lineno, header_end(stmt) + 1), *block_above(comments, stmt.lineno)]
    for ln in sorted(lines):
        text, alone = comments.get(ln, ("", False))
        if text and alone and about_cuda_feature(text):
            return [Evidence(KIND, ln, repr(text[:60]))]
    return []
