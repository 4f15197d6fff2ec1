"""``cuda-placed``: the site is an assertion of where a value is (``assert model.cos.device.type
== "cuda"``, ``self.assertTrue(x.is_cuda)``), and an earlier statement of the same function that
places or builds that value stays CUDA (``_materialize_meta_tensors(model,
torch.device("cuda"))``): the assertion checks what that code did. Rewritten alone it would
weaken the check (``!= "cpu"`` holds for a tensor left on the meta device too) while the code it
checks still names CUDA (litgpt's tests)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-placed"
SUMMARY = "it asserts where a value is, and the code that placed the value stays CUDA-specific"

_ASSERTS = ("assertEqual", "assertTrue", "assertFalse", "assertNotEqual")


def _assertion(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Assert):
        return True
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _ASSERTS
    )


def _subjects(stmt: ast.stmt) -> set[str]:
    """The root names of the values whose device the assertion reads (``model`` of
    ``model.cos.device.type``, ``x`` of ``x.is_cuda``)."""
    out = set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.Attribute) and n.attr in ("device", "is_cuda"):
            obj = n.value
            while isinstance(obj, (ast.Attribute, ast.Subscript, ast.Call)):
                obj = obj.func if isinstance(obj, ast.Call) else obj.value
            if isinstance(obj, ast.Name) and obj.id != "self":
                out.add(obj.id)
    return out


def detect(p: Probe) -> list[Evidence]:
    stmt = p.stmt
    if not _assertion(stmt):
        return []
    names = _subjects(stmt)
    if not names or not p.functions:
        return []
    for before in ast.walk(p.functions[0]):
        if not isinstance(before, ast.stmt) or before.lineno >= stmt.lineno:
            continue
        if isinstance(before, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(before, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            continue  # a compound statement: its own statements are walked
        if not any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(before)):
            continue
        hits = p.remaining(span_of(before), p.own)
        if hits:
            return first_hit(KIND, hits)
    return []
