"""``cuda-library-unit``: the site sits in a function that does work with a CUDA-only library
(``[libraries]``: CuPy, numba's CUDA, PyCUDA, ...; ``libraries.py``) outside the site itself: it
imports the library there, or calls through a name bound to it (``function.Module()`` after
``from cupy.cuda import function``), and not under a test of the library's presence (MONAI's
``if has_cp and isinstance(x, cp.ndarray):`` is an optional path beside the CPU's). The
function's work runs on CUDA alone, so the device, stream or placement it names is the one that
library needs: OpenNMT's ``load_sru_mod`` compiles its SRU kernels with NVRTC, loads them with
``cupy.cuda.function`` and sets ``device = torch.device("cuda")`` and ``SRU_STREAM`` from
``torch.cuda.current_stream()`` for them (round 34). A neutral device there would hand another
accelerator's memory to a library that reads CUDA pointers. The function is the innermost one
holding the site; a module's top level is no unit (the library may serve other functions)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import inside, span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-library-unit"
SUMMARY = "it is in a function whose work is a CUDA-only library's"

_LIBRARY = "no accelerator but CUDA)"  # ``libraries.py``'s words for a use of the library


def detect(p: Probe) -> list[Evidence]:
    if not p.functions:
        return []
    fn = p.functions[0]
    uses = [(sp, w) for sp, w in p.index.libraries_used_in(span_of(fn)) if w.endswith(_LIBRARY)]
    for sp, what in uses:
        node = p.index.at.get(sp)
        if inside(sp, p.own) or not _work(p, node) or _optional(p, node, fn, uses):
            continue
        return [Evidence(KIND, sp[0][0], f"the function uses {what} (line {sp[0][0]})")]
    return []


def _work(p: Probe, node) -> bool:
    """An import of the library, or a call through a name bound to it."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    n, parent = node, p.index.parents.get(node)
    while isinstance(parent, ast.Attribute) and parent.value is n:
        n, parent = parent, p.index.parents.get(parent)
    return isinstance(parent, ast.Call) and parent.func is n


def _optional(p: Probe, node, fn: ast.AST, uses) -> bool:
    """``node`` runs only under a test that asks for the library (a flag or a type of it)."""
    n = node
    while n is not None and n is not fn:
        parent = p.index.parents.get(n)
        test = getattr(parent, "test", None)
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and test is not n:
            if any(inside(sp, span_of(test)) for sp, _ in uses):
                return True
        n = parent
    return False
