"""``cuda-twin``: an enclosing function has a twin for any accelerator beside it, the same name
with its CUDA word made neutral (``require_torch_multi_gpu`` and
``require_torch_multi_accelerator``, ``require_torch_up_to_2_gpus`` and
``require_torch_up_to_2_accelerators``: transformers' ``testing_utils``, round 28). A project that
keeps both spells out which one is CUDA's: its tests pick one or the other, and the CUDA one made
neutral would answer as its twin does (on a machine with two XPUs a multi-GPU test and its
non-multi-GPU complement both skip). The twin is looked for in the same body (the module's, the
class's, the enclosing function's), by name."""

from __future__ import annotations

import ast
import re

from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-twin"
SUMMARY = "the function has a twin for any accelerator beside it"

# a CUDA word of a name and the neutral words its twin may say instead
_WORD = re.compile(r"(?i)(?<![a-z])(gpus|gpu|cuda)(?![a-z])")
_NEUTRAL = ("accelerator", "device", "accel")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _twins(name: str) -> set[str]:
    out = set()
    if _WORD.fullmatch(name):  # `Storage.cuda` beside its `device`: the method, no twin
        return out
    for m in _WORD.finditer(name.replace("_", " ")):
        plural = m.group(1).lower() == "gpus"
        for word in _NEUTRAL:
            new = word + "s" if plural else word
            if m.group(1).isupper():
                new = new.upper()
            elif m.group(1)[0].isupper():
                new = new.capitalize()
            out.add(name[: m.start()] + new + name[m.end() :])
    return out


def detect(p: Probe) -> list[Evidence]:
    for d in p.defs:
        if not isinstance(d, _FUNCS):
            continue
        twins = _twins(d.name)
        if not twins:
            continue
        owner = p.index.parents.get(d)
        body = getattr(owner, "body", None) or p.ctx.tree.body
        found = sorted(s.name for s in body if isinstance(s, _FUNCS) and s.name in twins)
        if found:
            return [Evidence(KIND, d.lineno, f"{d.name} beside {found[0]}")]
    return []
