"""``cuda-owned-path``: the file (or one of its functions) implements CUDA support itself.

A neutral rewrite there changes what CUDA's own implementation does on another accelerator.
Data: ``cuda_intent.toml`` ``[[owned]]`` (a path prefix, optionally limited to functions). Or
the tree says so: a module or package named for CUDA beside its twin named for another backend
(Lightning's ``accelerators/cuda.py`` beside ``mps.py`` and ``xla.py``, DeepSpeed's
``cuda_accelerator.py`` beside ``xpu_accelerator.py``; in torch, ``torch/cuda/`` beside
``torch/xpu/``): the project implements each backend in its own module, and this one is CUDA's.
It is reached where CUDA was chosen, and a registered accelerator (``torch.accelerator``) may be
another device there."""

from __future__ import annotations

import fnmatch
import re

from audits.vocabulary import DEVICE_TYPES
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
    twin = _backend_twin(p.ctx)
    if twin and not out:
        out.append(Evidence(KIND, p.f.line, twin))
    return out


_CUDA = re.compile(r"(?<![a-z])cuda(?![a-z])", re.IGNORECASE)
_OTHERS = tuple(d.name for d in DEVICE_TYPES if d.name != "cuda") + ("rocm",)


def _backend_twin(ctx) -> str:
    """``"<path> beside <twin>"`` where a folder or the module on the file's path is named for
    CUDA and its folder holds the same name for another backend; else ``""``."""
    index = getattr(ctx, "tree_index", None)
    if index is None:
        return ""
    parts = ctx.path.replace("\\", "/").split("/")
    parts[-1] = parts[-1].removesuffix(".py")
    for i, name in enumerate(parts):
        if name == "__init__" or not _CUDA.search(name):
            continue
        here = index.names_in("/".join(parts[:i]))
        for other in _OTHERS:
            twin = _CUDA.sub(other, name)
            if twin in here:
                return f"{'/'.join(parts[: i + 1])} beside {twin}: one module per backend"
    return ""
