"""``cuda-branch``: the site is in a branch only CUDA reaches (``if x.is_cuda:``,
``device.type == "cuda"``, ``@onlyCUDA``, an earlier ``if not <CUDA>: return`` of its block), and
that condition stays: there the rewrite is moot noise, CUDA is all that runs it. The else arm of a
test that names only another backend (``if dev == "xpu": ... else: torch.cuda.current_device()``)
is the dispatch's default, which every other device reaches: no evidence; so is the else arm of
an ``and`` chain one of whose terms is not about CUDA (``d is not None and d.type != "cuda"``:
reached with no ``d`` at all).

A test reading a switch parameter of the function (the device-flag family's switch: no default
or a bool one, no annotation or ``bool``) is judged by that parameter's declaration: ``if cuda:``
under ``def f(self, cuda=False)`` is CUDA's branch while the switch stays a CUDA switch (its HN510
site is left), as gpytorch's tests hold it; upstream neutralised none of the 44 labelled sites
on or just under ``if cuda:`` / ``if use_cuda:`` (``distributed_test.py``'s ``if cuda: t =
t.cuda(rank)``, ``codecache.py``, ``profiler.py``, ``cpp_extension.py``).
Else the device-flag family would convert the switch on the next run, once this run had
rewritten the CUDA code it selects. A parameter that is no switch (``mode: CUDAInitMode``) is
the author's word, no evidence. A switch with a third state (``cuda=None``: "True moves to
CUDA, False to the CPU, None leaves it", torch-fidelity's public wrapper) is one the family
never converts: its ``if cuda:`` stays CUDA's branch."""

from __future__ import annotations

import ast
import re

from patches.generate.intent.data import other_backend_only
from patches.generate.intent.nodes import (
    DEFS,
    declared,
    exits,
    last_name,
    negative,
    span_of,
    switch_decl,
    tri_state_decl,
)
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-branch"
SUMMARY = "only CUDA reaches this branch (moot)"

_ONLY = re.compile(r"only.*cuda|requires?_?cuda|needs?_?cuda|skip_?unless|skipif", re.IGNORECASE)


def _cuda_only_decorator(dec) -> bool:
    """``@onlyCUDA``, ``@requires_cuda``, ``@skipIf(not <cuda>)``, ``@skipUnless(<cuda>)``."""
    f = dec.func if isinstance(dec, ast.Call) else dec
    name = last_name(f)
    if name in ("skipIf",):
        return isinstance(dec, ast.Call) and bool(dec.args) and negative(dec.args[0])
    return bool(_ONLY.search(name))


def _tests(p: Probe, n, parent) -> list:
    """The conditions above ``n`` (a child of ``parent``) that only CUDA may pass."""
    tests = []
    if isinstance(parent, (ast.If, ast.While, ast.IfExp)) and n is not parent.test:
        tests = [parent.test]  # either side of a test that stays CUDA is about CUDA
        orelse = parent.orelse
        if n is orelse or (isinstance(orelse, list) and n in orelse):
            tests = [(parent.test, "default")]  # the default arm of a per-device dispatch
    elif isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
        tests = [v for v in parent.values[: parent.values.index(n)] if not negative(v)]
    elif isinstance(parent, DEFS) and n in parent.body:
        tests = [d for d in parent.decorator_list if _cuda_only_decorator(d)]
    # an earlier `if not <CUDA>: return/raise` of the same block: only CUDA gets here
    block = p.index.block_of(n)
    if block is not None and isinstance(n, ast.stmt):
        for prev in block[: block.index(n)]:
            if isinstance(prev, ast.If) and exits(prev.body) and negative(prev.test):
                tests.append(prev.test)
    return tests


def _reached_without(p: Probe, test) -> bool:
    """The else arm of an ``and`` chain with a term that stays CUDA nowhere (``if d is not None
    and d.type != "cuda": ... else: <site>``): that term's failing alone reaches the arm, with no
    device at all, so the arm is not CUDA's only."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return False
    return any(not p.remaining(span_of(v), p.own) for v in test.values)


def _declared(p: Probe, test) -> list:
    """The switch parameters ``test`` reads by their bare name, as the spans of their
    declarations (``cuda=False``: the name and its default) in the function enclosing it."""
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    n, spans = test, []
    while names and (n := p.index.parents.get(n)) is not None:
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for name in sorted(names):
            decl = declared(n, name)
            if decl is not None:
                names.discard(name)
                arg, default = decl
                if switch_decl(arg, default) or tri_state_decl(arg, default):
                    spans.append(span_of([arg] + ([default] if default is not None else [])))
        names -= {x.arg for x in (n.args.vararg, n.args.kwarg) if x is not None}
    return spans


def _hits(p: Probe, test) -> list:
    """What stays CUDA in ``test``, or in the declaration of a parameter it reads."""
    hits = p.remaining(span_of(test), p.own)
    for sp in [] if hits else _declared(p, test):
        hits = p.remaining(sp, p.own)
        if hits:
            break
    return p.collective_free(hits)


def detect(p: Probe) -> list[Evidence]:
    n = p.node
    while True:
        parent = p.index.parents.get(n)
        if parent is None:
            return []
        for t in _tests(p, n, parent):
            t, default = t if isinstance(t, tuple) else (t, "")
            if default and _reached_without(p, t):
                continue
            hits = _hits(p, t)
            if default:  # `if dev == "xpu": ... else: <site>`: every other device gets here
                hits = [h for h in hits if not other_backend_only(h[1])]
            if hits:
                return first_hit(KIND, hits)
        n = parent
