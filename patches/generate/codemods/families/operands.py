"""The tensor a function works on: a device the code already holds where no ``device`` name is in
scope (issue 24: "use the device the code already has: the tensor's own device").

* A factory's ``device="cuda"`` whose result meets, in one arithmetic operation or comparison, a
  tensor derived from one parameter: ``powers_of_two = 2 ** torch.arange(8, device="cuda")`` ...
  ``bits.to(torch.float) @ powers_of_two`` in ``_compute_compressed_swizzled_bitmask(dense)`` ->
  ``device=dense.device`` (upstream's own form, torch 2.15). The operation needs both on one
  device, so on CUDA the parameter was CUDA's; elsewhere the result follows it.
* A disabled autocast's device type (``with torch.autocast("cuda", enabled=False):`` around work
  on a tensor parameter ``x``) -> ``x.device.type``: autocast off for the device the work runs on.

A parameter counts only where the function shows it is a tensor (an annotation naming
``Tensor``, or a method only tensors have: ``x.unsqueeze(...)``, ``x.bool()``, ``x.dim()``, an
in-place ``x.squeeze_(1)``; ``.shape`` beside a cast, which modules lack and NumPy spells
otherwise), it is not assigned before the site, and it has no ``None`` default. Derivation follows a value's spine (the
receiver of a method chain, a subscript, both sides of arithmetic) and stops at what makes a
number or moves the data (``.shape``, ``.item()``, ``.to(...)`` with a device, ``.cpu()``): such
a value's device says nothing about the site's. Several parameters, or none: nothing (left).
"""

from __future__ import annotations

import ast
import re

from patches.generate.codemods.context import param_defaults
from patches.generate.intent.nodes import last_name, plain_cuda

# methods (and attributes) that a torch.Tensor has and neither nn.Module nor numpy.ndarray does
TENSOR_ONLY = frozenset(
    {
        "contiguous",
        "unsqueeze",
        "unfold",
        "detach",
        "numel",
        "dim",
        "masked_fill",
        "type_as",
        "view_as",
        "new_zeros",
        "new_ones",
        "new_empty",
        "new_full",
        "new_tensor",
        "is_contiguous",
        "element_size",
        "is_cuda",
        "bool",
        "long",
        "int",
    }
)
# casts a module has too (``nn.Module.float()``): a tensor's only beside ``.shape``
CASTS = frozenset({"float", "half", "bfloat16", "double"})
# a value's spine stops here: numbers and facts about the tensor, or data moved elsewhere
STOPS = frozenset(
    {"shape", "size", "numel", "dim", "ndim", "item", "tolist", "numpy", "dtype", "device"}
    | {"cpu", "cuda", "is_cuda", "data_ptr", "stride", "storage", "nelement", "any", "all"}
)
_UNIONS = frozenset({"Optional", "Union"})
_NAMES_TENSOR = re.compile(r"\bTensor\b")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _params(fn) -> list[ast.arg]:
    a = fn.args
    return [p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]


def _none_defaults(fn) -> set[str]:
    return {
        name
        for name, d in param_defaults(fn).items()
        if isinstance(d, ast.Constant) and d.value is None
    }


def _own(fn):
    """The nodes of ``fn``'s body outside nested functions, lambdas and classes."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        yield node
        todo.extend(
            c
            for c in ast.iter_child_nodes(node)
            if not isinstance(c, (*_FUNCS, ast.Lambda, ast.ClassDef))
        )


def tensor_annotation(ann: ast.AST) -> bool:
    """``ann`` types one tensor: ``Tensor``, ``torch.Tensor``, ``Optional[Tensor]``, ``Tensor |
    None``, a shaped tensor (jaxtyping's ``Float[Tensor, "b n"]``), or its string. A container
    of tensors is not one (boltz's ``feats: dict[str, Tensor]``, round 41)."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(ann, (ast.Name, ast.Attribute)):
        return last_name(ann) == "Tensor"
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        members = [ann.left, ann.right]
    elif isinstance(ann, ast.Subscript) and last_name(ann.value) in _UNIONS:
        inner = ann.slice
        members = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    elif isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple):
        shaped = ann.slice.elts  # jaxtyping: the array type, then its shape as a string
        return (
            len(shaped) == 2
            and isinstance(shaped[0], (ast.Name, ast.Attribute))
            and last_name(shaped[0]) == "Tensor"
            and isinstance(shaped[1], ast.Constant)
            and isinstance(shaped[1].value, str)
        )
    else:
        return False
    typed = [m for m in members if not (isinstance(m, ast.Constant) and m.value is None)]
    return bool(typed) and all(tensor_annotation(m) for m in typed)


def _is_tensor(fn, p: ast.arg, nodes) -> bool:
    if p.annotation is not None and _NAMES_TENSOR.search(ast.unparse(p.annotation)):
        return tensor_annotation(p.annotation)  # else a container of tensors
    used = {
        n.attr
        for n in nodes
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == p.arg
    }
    in_place = any(a.endswith("_") and a[0] != "_" and a != "requires_grad_" for a in used)
    return in_place or bool(used & TENSOR_ONLY) or ("shape" in used and bool(used & CASTS))


def tensor_params(fn, before: int) -> list[str]:
    """``fn``'s tensor parameters (signature order) not assigned before line ``before``."""
    nodes = list(_own(fn))
    stored = {
        n.id
        for n in nodes
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < before
    }
    skip = stored | _none_defaults(fn)
    return [p.arg for p in _params(fn) if p.arg not in skip and _is_tensor(fn, p, nodes)]


def _dtype_only(call: ast.Call) -> bool:
    """``x.to(torch.float)`` / ``x.to(dtype=...)``: a cast, not a move."""
    args_ok = all(
        isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id == "torch"
        for a in call.args
    )
    return args_ok and all(k.arg in ("dtype", "copy", "non_blocking") for k in call.keywords)


def roots(node: ast.AST) -> list[ast.AST]:
    """The leaves of ``node``'s spine (names and calls it is computed from), or [] where the
    spine makes a number or moves data (``STOPS``)."""
    if isinstance(node, ast.Name):
        return [node]
    if isinstance(node, ast.BinOp):
        return roots(node.left) + roots(node.right)
    if isinstance(node, ast.UnaryOp):
        return roots(node.operand)
    if isinstance(node, ast.Subscript):
        return roots(node.value)
    if isinstance(node, ast.Attribute):
        return [] if node.attr in STOPS else roots(node.value)
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and not (
            isinstance(f.value, ast.Name) and f.value.id == "torch"
        ):
            if f.attr in STOPS or (f.attr == "to" and not _dtype_only(node)):
                return []
            return roots(f.value)
        return [node]
    return []


def _sources(fn, params: list[str], limit: int) -> dict[str, set[str]]:
    """local name -> the tensor parameters its value derives from (assignments before
    ``limit``, to a fixed point)."""
    out = {p: {p} for p in params}
    assigns = [
        n
        for n in _own(fn)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and n.lineno < limit
    ]
    changed = True
    while changed:
        changed = False
        for a in assigns:
            name = a.targets[0].id
            if name in params:
                continue
            got = set().union(
                *(out.get(r.id, set()) for r in roots(a.value) if isinstance(r, ast.Name))
            )
            if got - out.get(name, set()):
                out[name] = out.get(name, set()) | got
                changed = True
    return out


def _factory_names(fn, call: ast.Call) -> set[str]:
    """Locals whose value's spine holds ``call`` (``p = 2 ** torch.arange(8, device="cuda")``)."""
    return {
        n.targets[0].id
        for n in _own(fn)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and any(r is call for r in roots(n.value))
    }


def _pairs(fn):
    """(left, right) of each arithmetic operation and one-comparator comparison of ``fn``."""
    for n in _own(fn):
        if isinstance(n, ast.BinOp):
            yield n.left, n.right
        elif isinstance(n, ast.Compare) and len(n.comparators) == 1:
            yield n.left, n.comparators[0]


def factory_operand(fn, call: ast.Call) -> str | None:
    """The one tensor parameter of ``fn`` whose derived value ``call``'s result meets."""
    params = tensor_params(fn, call.lineno)
    if not params:
        return None
    sources = _sources(fn, params, 10**9)
    mine = _factory_names(fn, call)
    met: set[str] = set()
    for left, right in _pairs(fn):
        for a, b in ((left, right), (right, left)):
            ra = roots(a)
            if not any(r is call or (isinstance(r, ast.Name) and r.id in mine) for r in ra):
                continue
            for r in roots(b):
                if isinstance(r, ast.Name) and r.id not in mine:
                    met |= sources.get(r.id, set())
    return next(iter(met)) if len(met) == 1 else None


def body_operand(fn, with_node: ast.With) -> str | None:
    """The first tensor parameter (signature order) that ``with_node``'s body uses."""
    params = tensor_params(fn, with_node.lineno)
    used = {
        n.id
        for stmt in with_node.body
        for n in ast.walk(stmt)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return next((p for p in params if p in used), None)


def enclosing_function(ctx, line: int):
    """The function whose own body holds ``line`` (not a class body, not a lambda)."""
    fn = ctx.scope_at(line).node
    return fn if isinstance(fn, _FUNCS) else None


def factory_at(ctx, line: int) -> str | None:
    """The parameter for the factory calls at ``line`` passing ``device="cuda"`` (or
    ``torch.device("cuda")``; each must agree), else None."""
    fn = enclosing_function(ctx, line)
    if fn is None:
        return None
    calls = [
        n
        for n in _own(fn)
        if isinstance(n, ast.Call)
        and n.lineno == line
        and any(k.arg == "device" and plain_cuda(k.value) for k in n.keywords)
    ]
    found = {factory_operand(fn, c) for c in calls}
    return found.pop() if len(found) == 1 else None


def with_operand(ctx, line: int) -> str | None:
    """The parameter for the ``with`` statement one of whose items spans ``line`` (the caller
    checks that item is a disabled autocast), else None."""
    fn = enclosing_function(ctx, line)
    if fn is None:
        return None
    for n in _own(fn):
        if isinstance(n, (ast.With, ast.AsyncWith)) and any(
            i.context_expr.lineno <= line <= i.context_expr.end_lineno for i in n.items
        ):
            return body_operand(fn, n)
    return None
