"""``cuda-owned-path``: the file (or one of its functions) implements CUDA support itself.

A neutral rewrite there changes what CUDA's own implementation does on another accelerator.
Data: ``cuda_intent.toml`` ``[[owned]]`` (a path prefix, optionally limited to functions)."""

from __future__ import annotations

import fnmatch

from patches.generate.intent.data import owned
from patches.generate.intent.nodes import tree_path
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-owned-path"
SUMMARY = "the file implements CUDA support itself"
NEEDS_NODE = False


def detect(p: Probe) -> list[Evidence]:
    out = []
    for prefix, funcs in owned(tree_path(p.ctx)):
        if not funcs:
            out.append(Evidence(KIND, p.f.line, f"{prefix} implements CUDA"))
            continue
        hit = [d.name for d in p.defs if any(fnmatch.fnmatch(d.name, pat) for pat in funcs)]
        if hit:
            out.append(Evidence(KIND, p.f.line, f"{hit[0]}() in {prefix} is CUDA's"))
    return out
