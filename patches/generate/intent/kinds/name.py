"""``cuda-name``: the value is handed to a slot that asks for CUDA by contract: a keyword of a
call (``SystemEnv(is_cuda_available=...)``, ``f(use_cuda=...)``: the callee documents the slot as
CUDA's) or a ``{"cuda": ...}`` entry (a per-device-type table). The name a value is assigned to
(``use_cuda = ...``, ``all_cuda &= ...``) is the author's own word and no evidence: the code that
reads the name is judged where it runs (``cuda-flow``, ``cuda-branch``)."""

from __future__ import annotations

import ast

from patches.generate.intent.data import is_cuda_word
from patches.generate.intent.nodes import COMPS
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-name"
SUMMARY = "the value is handed to a keyword or table entry that names CUDA"


def detect(p: Probe) -> list[Evidence]:
    name = _carrier_name(p)
    return [Evidence(KIND, p.node.lineno, f"flows into {name}")] if name else []


def _carrier_name(p: Probe) -> str:
    """Climb through the expressions that carry the value: a CUDA keyword or dict key on the
    way, else ""."""
    n = p.node
    while True:
        parent = p.index.parents.get(n)
        if parent is None or isinstance(parent, ast.stmt):
            return ""
        if isinstance(parent, ast.keyword) and parent.arg and is_cuda_word(parent.arg):
            return parent.arg
        if isinstance(parent, ast.Dict) and n in parent.values:
            key = parent.keys[parent.values.index(n)]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if is_cuda_word(key.value):
                    return repr(key.value)
        if isinstance(parent, (ast.Lambda, *COMPS)) or isinstance(parent, ast.comprehension):
            return ""
        n = parent
