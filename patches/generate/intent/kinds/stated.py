"""``cuda-stated``: the author wrote that other devices take the other path. A sentence names CUDA
and says so ("keep the original path for autograd and other devices", "CUDA only", "on other
devices (CPU, MPS) ...", "on a CUDA device, ``patch`` otherwise", "it can only be used with CUDA
enabled": ``vocabulary.EXCLUSIVE_PHRASES``; ``prose.excludes_others``) in the comment block above
the site or in its statement's header, or in a paragraph of the docstring of the function holding
it, or of that method's class where the site tests the device (basicsr's BasicVSR++: "it can
only be used with CUDA enabled. If CUDA is not enabled, feature alignment will be skipped" speaks
for the check that builds the alignment, not for its CPU cache's ``.cuda()``). Or the function's
own docstring speaks of CUDA and, apart from it, of another backend by name (kornia's morphology
engine: "MPS keeps ``shift`` ..."): its author weighed the devices. Made neutral, the code would
take CUDA's path where its author said it must not.

Not read: a comment above a module constant the site reads (torch's ``_JIT_TIME  # CUDA-only
timing`` says what the timing did, and upstream made it neutral; trl's "``addmm(...,
out_dtype=...)`` from bf16/fp16 inputs, CUDA only" is the same shape), and a list of backends
with CUDA ("moved to cuda, xpu and hpu but not otherwise": ``masked_fill``'s open list).

``LATE``: asked once the other kinds have settled, so that a site they leave is named by what its
code is (a timeline, a state)."""

from __future__ import annotations

import ast

from patches.generate.intent.comments import block_above, header_end
from patches.generate.intent.probe import Evidence, Probe
from patches.generate.intent.prose import excludes_others, weighs_backends

KIND = "cuda-stated"
LATE = True
SUMMARY = "the author wrote that other devices take the other path"


def detect(p: Probe) -> list[Evidence]:
    stmt = p.stmt
    if not hasattr(stmt, "lineno"):
        return []
    for where, text in _texts(p, stmt):
        if where and excludes_others(text):
            return [Evidence(KIND, min(where), repr(" ".join(text.split())[:60]))]
    for d in p.functions[:1]:  # a class's docstring speaks for all its methods: not there
        if weighs_backends(ast.get_docstring(d) or ""):
            return [Evidence(KIND, d.body[0].lineno, f"{d.name}'s docstring weighs the backends")]
    return []


def _texts(p: Probe, stmt: ast.stmt):
    """(lines, text) of each place an author explains the site."""
    comments = p.index.comments
    header = range(stmt.lineno, header_end(stmt) + 1)
    alone = [ln for ln in header if comments.get(ln, ("", False))[1]]
    yield _joined(comments, alone + block_above(comments, stmt.lineno))
    arms = _arm_heads(p, stmt)
    if arms:
        yield _joined(comments, arms)
    for d in _documented(p):
        if isinstance(d, ast.ClassDef) and not _tests(p):
            continue  # a class's sentence speaks for the checks that choose its paths
        doc = ast.get_docstring(d) or ""
        yield from (([d.body[0].lineno], para) for para in doc.split("\n\n"))


def _arm_heads(p: Probe, stmt: ast.stmt) -> list[int]:
    """The comment lines heading the arms of the ``if`` whose test holds the site (above the
    first statement of its body, and of its ``else``; not an ``elif``'s): sam2's "torch.repeat
    on complex numbers may not be supported on non-CUDA devices" opens the ``else`` of ``if
    freqs_cis.is_cuda:`` (round 34)."""
    if not isinstance(stmt, ast.If) or not any(n is stmt.test for n, _ in p.climb()):
        return []
    comments = p.index.comments
    out = block_above(comments, stmt.body[0].lineno)
    if stmt.orelse and not (len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If)):
        out += block_above(comments, stmt.orelse[0].lineno)
    return [ln for ln in out if ln > stmt.test.end_lineno]


def _tests(p: Probe) -> bool:
    """The site tests the device: an ``if``/``IfExp`` test, a part of a comparison or a boolean
    expression (kornia's ``use_conv = ... (self.mode == "auto" and x.is_cuda)``, which its
    class's docstring explains), ``x.is_cuda`` or an ``is_available()``; not work done on a
    device (``.cuda()``, ``empty_cache()``)."""
    if any(p.arms):
        return True
    n = p.node
    if isinstance(n, ast.Attribute) and n.attr == "is_cuda":
        return True
    if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("is_available"):
        return True
    return any(
        isinstance(parent, (ast.Compare, ast.BoolOp, ast.UnaryOp)) for _, parent in p.climb()
    )


def _documented(p: Probe) -> list[ast.AST]:
    """The innermost function holding the site, and its class when it is a method."""
    fns = p.functions[:1]
    owner = p.index.parents.get(fns[0]) if fns else None
    return fns + ([owner] if isinstance(owner, ast.ClassDef) else [])


def _joined(comments, lines: list[int]) -> tuple[list[int], str]:
    found = sorted(ln for ln in lines if ln in comments)
    return found, " ".join(comments[ln][0] for ln in found)
