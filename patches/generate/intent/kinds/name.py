"""``cuda-name``: the value flows into a name that says CUDA (``cuda_available_str = str(...)``,
``has_cuda = ...``, ``f(use_cuda=...)``, ``{"cuda": ...}``): the author asks about CUDA by name,
so a neutral answer would mislabel it."""

from __future__ import annotations

import ast

from patches.generate.intent.data import is_cuda_word
from patches.generate.intent.nodes import COMPS
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-name"
SUMMARY = "the value flows into a name that says CUDA"


def detect(p: Probe) -> list[Evidence]:
    name = _target_name(p)
    return [Evidence(KIND, p.node.lineno, f"flows into {name}")] if name else []


def _carrier_name(p: Probe) -> tuple[str, ast.AST]:
    """Climb through the expressions that carry the value: a CUDA keyword or dict key on the
    way, else ("", the outermost carrier)."""
    n = p.node
    while True:
        parent = p.index.parents.get(n)
        if parent is None or isinstance(parent, ast.stmt):
            return "", n
        if isinstance(parent, ast.keyword) and parent.arg and is_cuda_word(parent.arg):
            return parent.arg, n
        if isinstance(parent, ast.Dict) and n in parent.values:
            key = parent.keys[parent.values.index(n)]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if is_cuda_word(key.value):
                    return repr(key.value), n
        if isinstance(parent, (ast.Lambda, *COMPS)) or isinstance(parent, ast.comprehension):
            return "", n
        n = parent


def _target_name(p: Probe) -> str:
    found, n = _carrier_name(p)
    if found:
        return found
    stmt, targets = p.stmt, []
    if isinstance(stmt, ast.Assign) and stmt.value is n:
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is n:
        targets = [stmt.target]
    for t in targets:
        for sub in ast.walk(t):
            text = getattr(sub, "id", None) or getattr(sub, "attr", None)
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                text = sub.value
            if text and is_cuda_word(text):
                return text
    return ""
