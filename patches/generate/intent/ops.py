"""Operators of the tree that only CUDA implements: ``op.py_impl(DispatchKey.CUDA)`` and no
other device's key (``DispatchKey.CPU``, ``.XPU``, ``.PrivateUse1``, ...; Autograd, BackendSelect
and the like are no device). ``run_dtensor_rng_op`` in ``_prims/rng_prims.py`` is one: its
BackendSelect arm raises "only supports CUDA device". A call of such an op is CUDA work that
stays, in whatever file it is made (``remaining``): a check that sends other devices to it
(DTensor's ``first_local_arg.device.type != "cuda"`` made ``== "cpu"``) would break them.

Read once per tree from the files holding ``DispatchKey.CUDA`` (``TreeIndex.memo``); an op is
named by its module-level binding (``torch._prims.rng_prims.run_dtensor_rng_op``).

An operator any device runs may take an argument only CUDA does (``[arguments]`` of
``cuda_intent.toml``: autocast to float32, ``linalg.svd``'s cuSOLVER ``driver=``, a matmul's
``out_dtype=``): such a call is CUDA work that stays too (``argument_calls``)."""

from __future__ import annotations

import ast

from audits import vocabulary
from audits.resolve import dotted_parts
from patches.generate.intent.data import data
from patches.generate.intent.library_ops import cuda_only, registrations
from patches.generate.intent.nodes import Span, span_of

_KEY = b"DispatchKey.CUDA"
# dispatch keys that name a device (``DispatchKey.PrivateUse1``: "privateuse1")
DEVICE_KEYS = frozenset({*vocabulary.PY_BACKENDS, vocabulary.CPP_OPEN.lower()})


def cuda_only_ops(tree, ctx) -> frozenset[str]:
    """Qualified names of the tree's operators whose only device implementation is CUDA's (of
    ``ctx``'s own file when the run has no tree): ``py_impl`` ones by their binding, and
    ``torch.library`` ones (``library_ops``) as ``torch.ops.ns.op``."""
    if tree is None:
        return frozenset(_ops_of(ctx) | _library_ops([registrations(ctx.tree)]))
    if "cuda_only_ops" not in tree.memo:
        found: set[str] = set()
        for rel in tree.holding(_KEY):
            ctx = tree.context(rel)
            if ctx is not None:
                found |= _ops_of(ctx)
        parsed = (tree.tree(rel) for rel in tree.holding(b"library"))
        registered = [registrations(t) for t in parsed if t is not None]
        tree.memo["cuda_only_ops"] = frozenset(found | _library_ops(registered))
    return tree.memo["cuda_only_ops"]


def _library_ops(per_file: list[dict[str, set[str]]]) -> set[str]:
    """``torch.ops.ns.op`` of each operator the files register for CUDA alone, all together."""
    keys: dict[str, set[str]] = {}
    for found in per_file:
        for name, ks in found.items():
            keys.setdefault(name, set()).update(ks)
    return {f"torch.ops.{n.replace('::', '.')}" for n, ks in keys.items() if cuda_only(ks)}


def library_op(name: str) -> bool:
    """A ``torch.library`` operator's name (``torch.ops.ns.op``), not a ``py_impl`` binding."""
    return name.startswith("torch.ops.")


def _ops_of(ctx) -> set[str]:
    """The module-level names of ``ctx``'s CUDA-only operators: an object whose ``py_impl``
    registrations name CUDA alone, by its own name (``run_dtensor_rng_op.py_impl(...)``) or
    returned by the module function that registers it (``run_rng_op = _register(...)``)."""
    keys = _keys(ctx.tree)
    made: dict[str, set[str]] = {}
    for f in ctx.tree.body:
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = _keys(f)
            for r in ast.walk(f):
                if isinstance(r, ast.Return) and isinstance(r.value, ast.Name):
                    made.setdefault(f.name, set()).update(inner.get(r.value.id, ()))
    ops = set()
    for st in ctx.tree.body:
        if not isinstance(st, ast.Assign):
            continue
        maker = (
            st.value.func.id
            if isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)
            else None
        )
        for t in st.targets:
            if isinstance(t, ast.Name):
                ks = keys.get(t.id, set()) | made.get(maker, set())
                if ks == {"cuda"}:
                    ops.add(f"{ctx.module_name}.{t.id}")
    return ops


def _keys(node: ast.AST) -> dict[str, set[str]]:
    """name -> the device keys of its ``name.py_impl(DispatchKey.<key>)`` calls in ``node``."""
    out: dict[str, set[str]] = {}
    for n in ast.walk(node):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
            continue
        if n.func.attr != "py_impl" or not isinstance(n.func.value, ast.Name):
            continue
        arg = n.args[0] if n.args else None
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
            if arg.value.id == "DispatchKey" and arg.attr.lower() in DEVICE_KEYS:
                out.setdefault(n.func.value.id, set()).add(arg.attr.lower())
    return out


def op_calls(ctx, ops: frozenset[str]) -> list[tuple[Span, str]]:
    """(span of the callee, the op's name) of every call of one of ``ops`` in the file, sorted."""
    if not ops:
        return []
    out = []
    for n in ctx.nodes:
        parts = dotted_parts(n.func) if isinstance(n, ast.Call) else None
        q = ctx.qualify(n.lineno, ".".join(parts)) if parts else None
        if q and "." not in q:  # bound by this module's own assignment
            q = f"{ctx.module_name}.{q}"
        packet = q.rsplit(".", 1)[0] if q and library_op(q) else None  # ``op.default``'s op
        if q in ops or packet in ops:
            out.append((span_of(n.func), q if q in ops else packet))
    return sorted(out)


def argument_calls(ctx) -> list[tuple[Span, str]]:
    """(span of the call, ``name(keyword=value)``) of every call in the file passing an argument
    only CUDA takes (``[arguments]``: ``torch.autocast(..., dtype=torch.float32)``,
    ``torch.linalg.svd(a, driver="gesvd")``), sorted."""
    table = data()["arguments"]
    out = []
    for n in ctx.nodes:
        if not isinstance(n, ast.Call) or not n.keywords:
            continue
        parts = dotted_parts(n.func)
        q = ctx.qualify(n.lineno, ".".join(parts)) if parts else None
        wanted = table.get(q or "")
        if not wanted:
            continue
        for k in n.keywords:
            values = wanted.get(k.arg or "")
            if values is None:
                continue
            shown = ast.unparse(k.value)
            if values == "*" or shown in values:
                out.append((span_of(n), f"{q.rsplit('.', 1)[-1]}({k.arg}={shown[:30]})"))
                break
    return sorted(out)
