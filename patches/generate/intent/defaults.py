"""Reads of a parameter whose default is a CUDA device (``def __init__(self, device="cuda")``):
the value such a read gives stays CUDA's, since a parameter's default is the API's own choice
and the codemod keeps it. Code that reads one under a check (lmms-eval's ``if
torch.cuda.is_available() and device is not None: self._device = torch.device(device)``) is CUDA
work for ``remaining``, while the default stays."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import CUDA_DEVICE_STR, Span, param_defaults, span_of

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def cuda_default(d: ast.expr | None) -> bool:
    """``d`` is a CUDA device: ``"cuda"``, ``"cuda:0"``, ``torch.device("cuda", ...)``."""
    if isinstance(d, ast.Call) and d.args and ast.unparse(d.func).endswith("device"):
        d = d.args[0]
    return (
        isinstance(d, ast.Constant)
        and isinstance(d.value, str)
        and bool(CUDA_DEVICE_STR.fullmatch(d.value))
    )


def default_reads(nodes) -> list[tuple[Span, str, Span, Span]]:
    """(span, what, the default's span, the function body's span) of each read of a parameter
    that defaults to a CUDA device, that its function never binds again, handed to a call as
    an argument (``torch.device(device)``; a test of it, ``if device:``, is no use), sorted."""
    out = []
    for fn in nodes:
        if not isinstance(fn, _FUNCS):
            continue
        held = {n: d for n, d in param_defaults(fn).items() if cuda_default(d)}
        if not held:
            continue
        every = list(ast.walk(fn))
        stored = {x.id for x in every if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
        body = span_of(fn.body)
        for call in every:
            if not isinstance(call, ast.Call):
                continue
            for x in [*call.args, *(k.value for k in call.keywords)]:
                if isinstance(x, ast.Name) and x.id in held and x.id not in stored:
                    d = held[x.id]
                    what = f"{x.id}, whose default {ast.unparse(d)} stays"
                    out.append((span_of(x), what, span_of(d), body))
    out.sort()
    return out
