"""``cuda-restore``: the site sets a setting (``torch.backends.cuda.matmul.allow_tf32 = False``)
whose value the same function also reads by that name, and the read stays CUDA: a save (``old =
torch.backends.cuda.matmul.allow_tf32`` ... ``torch.backends.cuda.matmul.allow_tf32 = old``, no
literal to map). A neutral set between a CUDA save and a CUDA restore changes what the restore
undoes: they change together or not at all (litgpt's tests). Another plain set of the flag is no
evidence (``= True`` then ``= fast``: each set says what it sets)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-restore"
SUMMARY = "the setting it writes is saved or restored by code that stays CUDA-specific"


def _set_target(p: Probe) -> ast.Attribute | None:
    """The torch setting that the site's statement assigns (``torch.backends.cuda.matmul.
    allow_tf32``, through the file's imports), not an attribute of the file's own objects
    (``cfg.cuda = torch.cuda.is_available()``)."""
    stmt = p.stmt
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not isinstance(target, ast.Attribute):
        return None
    q = p.ctx.qualify(target.lineno, ast.unparse(target))
    return target if q is not None and q.startswith("torch.") else None


def detect(p: Probe) -> list[Evidence]:
    target = _set_target(p)
    if target is None:
        return []
    text = ast.unparse(target)
    scope = p.functions[0] if p.functions else p.ctx.tree
    for n in ast.walk(scope):
        if not (isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)):
            continue
        if ast.unparse(n) != text:
            continue
        hits = p.remaining(span_of(n), p.own)
        if hits:
            return first_hit(KIND, hits)
    return []
