"""A probe of a process group's GPU backend whose failure is swallowed (HN503 as the argument
of ``._get_backend``) -> the current accelerator's backend, CPU's when there is none::

    try:
        backend = pg._get_backend(torch.device("cuda"))
    except RuntimeError:
        backend = None          # or pass, or a fallback such as the CPU backend
        ->
    try:
        backend = pg._get_backend(torch.accelerator.current_accelerator() or torch.device("cpu"))
    except RuntimeError:
        backend = None

The try says what the probe asks: "this machine's accelerator backend, if the group has one".
On a CUDA machine ``current_accelerator()`` is ``torch.device("cuda")``: the same call. On
another accelerator it finds that accelerator's backend (XCCL, HCCL) where the CUDA literal
always failed; without one it asks for the CPU backend, which the code after the probe must
already take (it handles "not the GPU's backend": ``None``, an ``isinstance(backend,
ProcessGroupNCCL)`` test, a ``supports_splitting`` check, or it fell back to CPU itself).
Upstream made this rewrite between 2.13.0 and 2.14.1 (``distributed_c10d``: the process group's
uid, the split source, abort).

Only the whole unit, every part checked:

- the call is ``<expr>._get_backend(torch.device("cuda"))``, the device its only argument (a
  plain ``"cuda"``: ``"cuda:1"`` names one device, ``torch.device("cpu")`` is no finding);
- its statement binds or returns that call and is the whole body of a ``try`` (other
  statements in the body could use the backend as the GPU's) with no ``else`` (which would run
  on every success, now the CPU backend's too);
- that try's handler for ``RuntimeError`` (``except RuntimeError/Exception/BaseException``, a
  tuple holding one, or bare; ``getBackend`` raises ``RuntimeError`` when the group has no
  backend for the device) contains no ``raise``: it swallows the failure. The innermost try
  that catches it decides; a function boundary ends the search.

Left (with the reason, so ``--explain`` tells it):

- a probe outside such a try: there the raise *is* the behaviour. On a CPU-only machine (or a
  gloo-only group) ``pg._get_backend(torch.device("cuda"))`` raises ``RuntimeError``; the
  accelerator form would instead return the gloo backend and run on with a CPU backend where
  the code demands the GPU's. A try whose handler raises again is the same.
- a probe guarded by ``torch.device("cuda") in pg._device_types``: the intent gate's
  ``cuda-branch`` holds it (the check and the call go together; upstream kept them).
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import specs_at, string_value
from patches.generate.codemods.families.producers import parents

LITERAL_FAMILY = "device-literal"  # HN503's family: torch.device("cuda")
CTOR = "torch.device"
METHOD = "_get_backend"
NEW = 'torch.accelerator.current_accelerator() or torch.device("cpu")'
# what a handler must catch to catch getBackend's RuntimeError
CATCHES = frozenset({"RuntimeError", "Exception", "BaseException"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _probe(eng, call: cst.Call) -> bool:
    """``call`` is ``torch.device("cuda")``, the only argument of a ``._get_backend`` call."""
    if eng.qualnames(call.func) != {CTOR} or len(call.args) != 1:
        return False
    arg = call.args[0]
    if arg.keyword is not None or arg.star or string_value(arg.value) != "cuda":
        return False
    outer_arg = eng.parent(call)
    outer = eng.parent(outer_arg) if isinstance(outer_arg, cst.Arg) else None
    return (
        isinstance(outer, cst.Call)
        and isinstance(outer.func, cst.Attribute)
        and outer.func.attr.value == METHOD
        and len(outer.args) == 1
        and outer.args[0] is outer_arg
        and outer_arg.keyword is None
        and not outer_arg.star
    )


def _statement(ctx, line: int) -> ast.stmt | None:
    """The innermost statement holding ``line``."""
    best = None
    for s in ctx.stmts:
        if s.lineno <= line <= s.end_lineno:
            if best is None or s.end_lineno - s.lineno <= best.end_lineno - best.lineno:
                best = s
    return best


def _binds_probe(stmt: ast.stmt) -> bool:
    """``x = <e>._get_backend(...)`` / ``x: T = ...`` / ``return ...``: the statement is the probe."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Return)) else None
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == METHOD
    )


def _catches_runtime_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    if kinds is None:
        return True
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(isinstance(n, ast.Name) and n.id in CATCHES for n in names)


def _raises(handler: ast.ExceptHandler) -> bool:
    stack = list(handler.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Raise):
            return True
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return False


def why_kept(ctx, line: int) -> str | None:
    """None if the probe at ``line`` is the whole body of a try that swallows its failure,
    else why it is kept."""
    stmt = _statement(ctx, line)
    if stmt is None or not _binds_probe(stmt):
        return "a backend probe that is not bound or returned whole: kept"
    par = parents(ctx)
    node, up = stmt, par.get(stmt)
    while up is not None and not isinstance(up, _SCOPES):
        if isinstance(up, ast.Try) and node in up.body:
            handler = next((h for h in up.handlers if _catches_runtime_error(h)), None)
            if handler is not None:
                if _raises(handler):
                    return "a backend probe whose failure is raised again: CUDA required, kept"
                if up.body != [stmt] or up.orelse:
                    return "a backend probe sharing its try (body or else) with other code: kept"
                return None
        node, up = up, par.get(up)
    return "a backend probe outside a try that catches its RuntimeError: the raise is the behaviour, kept"


class BackendProbe(Family):
    """``pg._get_backend(torch.device("cuda"))`` in a swallowing try (module docstring)."""

    name = "backend-probe"

    def on_call(self, eng, original, updated):
        if not _probe(eng, original):
            return None
        specs = specs_at(eng, original, LITERAL_FAMILY, (CTOR,))
        if not specs or not eng.fixes(specs[0].rule, eng.line(original)):
            return None
        why = why_kept(eng.ctx, eng.line(original))
        if why is not None:
            eng.fail(specs[0], original, why)
            return updated
        eng.done(specs[0], original)
        eng.add_needed_import("torch", node=original)
        return cst.parse_expression(NEW)
