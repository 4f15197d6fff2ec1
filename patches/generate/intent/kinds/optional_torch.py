"""``torch-optional``: the file imports torch only where it needs it (inside a function), never
in its own scope (a module-level ``try`` or ``if is_torch_available():`` binds it there), so
torch is optional to it; every rewrite names ``torch`` and would import it at the top level,
where the file would no longer import without it (unsloth-zoo's ``tests/conftest.py`` stubs its
package for the CI job that runs without torch, round 38). Not about CUDA but safety: asked only
when no kind before it answered, and a site left for it keeps no other site CUDA. A site inside
a function that imports torch itself is rewritten."""

from __future__ import annotations

import ast

from patches.generate.intent.probe import Evidence, Probe

KIND = "torch-optional"
SUMMARY = "the file imports torch only where it needs it, and the rewrite would import it on top"
NEEDS_NODE = False
ALONE = True


def detect(p: Probe) -> list[Evidence]:
    lazy = _lazy_import(p.ctx.tree)
    if lazy is None or _imports_here(p):
        return []
    return [Evidence(KIND, p.f.line, f"torch is imported inside a function only (line {lazy})")]


def _torch(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] == "torch" for a in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch"


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _lazy_import(tree: ast.Module) -> int | None:
    """The line of the file's first import of torch when every one lies inside a function or a
    class, none in the module's own scope (``if is_torch_available(): import torch`` binds it
    there, and a rewrite adds no import), else None."""
    todo = list(tree.body)
    while todo:
        n = todo.pop()
        if isinstance(n, _DEFS):
            continue
        if isinstance(n, ast.stmt) and _torch(n):
            return None
        todo += [c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt)]
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt) and _torch(n)]
    return min(lines) if lines else None


def _imports_here(p: Probe) -> bool:
    """A function holding the site binds ``torch`` itself (``import torch`` before the site): the
    rewrite names it there. A from-import (``from torch.cuda import synchronize``) binds no
    ``torch``, and the rewrite would import it on top (a second run then found the file importing
    torch and rewrote the sites this one left: the idempotence property, round 42)."""
    return any(
        isinstance(n, ast.Import)
        and any(a.name.split(".")[0] == "torch" and a.asname is None for a in n.names)
        and n.lineno < p.f.line
        for fn in p.functions
        for n in ast.walk(fn)
    )
