"""``cuda-legacy``: the site lies in the arm a test of torch's own version takes on releases
older than the other arm's (Lightning's ``torch.amp.GradScaler(device=device) if
_TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()``). The other arm is the project's
port for newer torch; this one exists for a torch that may lack the neutral API (there,
``torch.amp.GradScaler`` did not exist before 2.3), so it stays as written.

A test reads torch's version when it compares ``torch.__version__`` (or a ``Version`` of it),
calls a helper named for the torch version (``is_torch_version(">=", "2.4")``), or reads a flag
so named (``_TORCH_GREATER_EQUAL_2_4``, ``TORCH_2_0``, ``TORCH_LT_2_1``). Names that say less
than or before take the old arm on their true side; ``not`` turns it.

A test of an attribute of torch (``hasattr(torch, "accelerator")``) is true on the newer torch,
and so is an ``and`` of it (axolotl's ``if hasattr(torch, "accelerator") and
torch.accelerator.is_available(): ... elif torch.cuda.is_available():``: the ``elif`` is what a
torch without ``torch.accelerator`` runs).
So is a ``try`` whose body calls torch: its handler for the error a missing API raises
(``AttributeError``, ``TypeError``, ``ImportError``) is the older arm (open_clip's ``except
(AttributeError, TypeError): scaler = torch.cuda.amp.GradScaler()`` after ``torch.amp.GradScaler(
device=device)``): made neutral, it would fail the way the body just did.

A CUDA check joined by ``and`` to such a test dates a CUDA feature: ultralytics'
``fused=True if TORCH_2_0 and p.is_cuda`` says when fused Adam came to CUDA (it came to MPS in
2.4), so the check stays CUDA's."""

from __future__ import annotations

import ast
import re

from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-legacy"
SUMMARY = "a torch version test dates it: the arm older torch takes, or a CUDA feature's release"

_FLAG = re.compile(
    r"(?i)(^|_)torch_?((version|greater|less|ge|gt|le|lt|before|after)(_|$|[0-9])|[0-9])"
)
_VERSION = re.compile(r"(?i)__version__|(^|_)torch_?version")
_OLDER = re.compile(r"(?i)(^|_)(less|lt|le|before|older|below)(_|$)")
_HELPER = re.compile(r"(?i)torch_version|torch_at_least")
_MISSING_API = {"AttributeError", "TypeError", "ImportError", "ModuleNotFoundError"}


def detect(p: Probe) -> list[Evidence]:
    n = p.node
    while n is not None:
        parent = p.index.parents.get(n)
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            dated = [v for v in parent.values if v is not n and _older_side(v) is not None]
            if dated:  # `TORCH_2_0 and p.is_cuda`: the release CUDA got the feature in
                return [Evidence(KIND, p.f.line, f"{ast.unparse(dated[0])[:60]} dates it")]
        if isinstance(parent, (ast.If, ast.IfExp)) and n is not parent.test:
            older = _older_side(parent.test)
            if older is not None:
                in_body = n is parent.body or (isinstance(parent.body, list) and n in parent.body)
                if in_body == older:
                    line = getattr(parent, "lineno", p.f.line)
                    test = ast.unparse(parent.test)[:60]
                    return [Evidence(KIND, line, f"older torch's arm of {test}")]
        if isinstance(n, ast.stmt) and _after_newer_exit(p, n):
            return [Evidence(KIND, n.lineno, "older torch's arm: the newer one returned")]
        if isinstance(parent, ast.ExceptHandler) and _missing_api(p, parent):
            return [Evidence(KIND, parent.lineno, "older torch's arm of a try on torch's API")]
        n = parent
    return []


def _after_newer_exit(p: Probe, stmt: ast.stmt) -> bool:
    """``stmt`` follows, in its block, an ``if`` on the newer torch whose body returns or
    raises (``if hasattr(torch, "accelerator"): return ...``)."""
    block = p.index.block_of(stmt) or []
    for prev in block[: block.index(stmt)] if stmt in block else []:
        if isinstance(prev, ast.If) and not prev.orelse and _older_side(prev.test) is False:
            if isinstance(prev.body[-1], (ast.Return, ast.Raise)):
                return True
    return False


def _missing_api(p: Probe, handler: ast.ExceptHandler) -> bool:
    """``handler`` catches what a missing API raises, after a ``try`` body that calls torch
    (under any alias: ``import torch as th``)."""
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    if not any(t is not None and ast.unparse(t) in _MISSING_API for t in types):
        return False
    trial = p.index.parents.get(handler)
    body = trial.body if isinstance(trial, ast.Try) else []
    calls = (c for stmt in body for c in ast.walk(stmt) if isinstance(c, ast.Call))
    names = (p.ctx.qualify(c.lineno, ast.unparse(c.func)) or "" for c in calls)
    return any(name.startswith("torch.") for name in names)


def _older_side(test) -> bool | None:
    """True when ``test`` is true on the older torch, False when on the newer, None when it is
    no test of torch's version."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        side = _older_side(test.operand)
        return None if side is None else not side
    if isinstance(test, ast.BoolOp):  # a term true on the newer torch alone dates an `and`
        side = isinstance(test.op, ast.Or)  # (a term true on the older alone, an `or`)
        return side if side in {_older_side(v) for v in test.values} else None
    if isinstance(test, (ast.Name, ast.Attribute)):
        name = test.id if isinstance(test, ast.Name) else test.attr
        return bool(_OLDER.search(name)) if _FLAG.search(name) else None
    if isinstance(test, ast.Call) and ast.unparse(test.func) == "hasattr" and test.args:
        return False if ast.unparse(test.args[0]).split(".")[0] == "torch" else None
    if isinstance(test, ast.Call) and _HELPER.search(ast.unparse(test.func)):
        op = test.args[0] if test.args else None
        if isinstance(op, ast.Constant) and op.value in ("<", "<=", ">", ">="):
            return op.value.startswith("<")
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if not _VERSION.search(ast.unparse(test.left)):
            return None
        return isinstance(test.ops[0], (ast.Lt, ast.LtE))
    return None
