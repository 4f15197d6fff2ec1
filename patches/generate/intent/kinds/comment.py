"""``cuda-comment``: a comment line in the site's statement header, or in the comment block
right above it, names a CUDA-only library or feature ("the cuSolver backend returns V^H", "also
makes sure this is CUDA or HIP", "NCCL style coalescing"): the author said the code works around
or serves that feature. A comment that only calls the device "cuda" ("Inputs always cuda", "we
only care for cuda tensors") names the device the code was written on, and upstream neutralises
such code like any other. Trailing comments are tags more often than explanations: not read.
The comment line right above an ``if`` holding the site (two out at most, within its function)
speaks for the whole block (the line, not its block: a FIXME three lines up about another statement
is not the ``if``'s; torch's ``destroy_pg``): neuralforecast's "Check for InputXGradient + GPU
incompatibility (cudnn error)" above the block that decides ``using_gpu`` from
``torch.cuda.is_available()``. Not an ``if`` whose own test names the feature: its comment restates
the dispatch (``# set device for nccl pg`` above ``if backend == "nccl":``, which upstream made
neutral). So does a line of the comment block right above the statement that names another
accelerator and what goes wrong there: the author weighed that backend and kept CUDA's path
(nnU-Net's "If the device_type is 'mps' then it will complain that mps is not implemented ... So
autocast will only be active if we have a cuda device", round 37)."""

from __future__ import annotations

import ast

from patches.generate.intent.comments import block_above, header_end
from patches.generate.intent.data import about_cuda_feature, weighs_backends
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-comment"
SUMMARY = "the comment at the site is about CUDA"


def detect(p: Probe) -> list[Evidence]:
    stmt, comments = p.stmt, p.index.comments
    if not hasattr(stmt, "lineno"):
        return []
    lines = [*range(stmt.lineno, header_end(stmt) + 1), *block_above(comments, stmt.lineno)]
    for outer in _enclosing_ifs(p, stmt):
        if not about_cuda_feature(ast.unparse(outer.test)):
            lines += block_above(comments, outer.lineno)[:1]
    for ln in sorted(lines):
        text, alone = comments.get(ln, ("", False))
        if text and alone and about_cuda_feature(text):
            return [Evidence(KIND, ln, repr(text[:60]))]
    block = sorted(block_above(comments, stmt.lineno))
    if block and weighs_backends([comments[ln][0] for ln in block]):
        return [Evidence(KIND, block[0], "the comment above says another backend fails here")]
    return []


def _enclosing_ifs(p: Probe, stmt: ast.stmt, most: int = 2) -> list[ast.If]:
    """The ``if`` statements holding ``stmt`` (innermost first, ``most`` of them), up to the
    first statement that is no ``if`` (a loop, a function, a class)."""
    out, n = [], p.index.parents.get(stmt)
    while isinstance(n, ast.If) and len(out) < most:
        out.append(n)
        n = p.index.parents.get(n)
    return out
