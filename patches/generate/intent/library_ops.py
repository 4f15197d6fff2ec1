"""Operators a file registers through ``torch.library`` and the device keys it registers them for:
``@torch.library.impl("quanto::gemm_f16i4_awq", ["CUDA"])``, ``lib.impl("op", fn, "CUDA")`` and
``torch.library.impl(lib, "op", "CUDA")`` on a ``lib = torch.library.Library("ns", ...)``,
``@torch.library.custom_op("ns::op", device_types="cuda")`` (no ``device_types``: every device),
``torch.library.register_kernel("ns::op", "cuda")`` and ``@op.register_kernel("cpu")`` on such a
custom op. ``ops.cuda_only_ops`` gathers them over the tree: an operator whose only device is
CUDA (a meta or autograd kernel aside) is ``torch.ops.ns.op``, a kernel other accelerators lack
(optimum-quanto's AWQ and Marlin GEMMs, round 37)."""

from __future__ import annotations

import ast

from audits.resolve import dotted_parts

# keys that run no device's kernel: a CUDA-only op keeps them beside CUDA's
NO_DEVICE = frozenset({"meta", "autograd", "autogradcuda", "functionalize", "backendselect"})
EVERY = "every"  # a custom op with no ``device_types``: its one kernel runs on every device


def registrations(tree: ast.Module) -> dict[str, set[str]]:
    """``"ns::op"`` -> the device keys (lower-cased) the module registers it for."""
    libs = _libraries(tree)
    customs: dict[str, str] = {}  # a custom op's function name -> "ns::op"
    out: dict[str, set[str]] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in n.decorator_list:
                found = _custom_op(d)
                if found:
                    customs[n.name] = found[0]
                    out.setdefault(found[0], set()).update(found[1])
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            found = _registration(n, libs, customs)
            if found:
                out.setdefault(found[0], set()).update(found[1])
    return out


def _libraries(tree: ast.Module) -> dict[str, str]:
    """Names bound to ``torch.library.Library("ns", ...)`` -> ``ns``."""
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            parts = dotted_parts(n.value.func) or []
            ns = _text(n.value.args[0]) if n.value.args else None
            if parts[-1:] == ["Library"] and ns:
                out.update((t.id, ns) for t in n.targets if isinstance(t, ast.Name))
    return out


def _custom_op(d: ast.expr) -> tuple[str, set[str]] | None:
    if not (isinstance(d, ast.Call) and (dotted_parts(d.func) or [""])[-1] == "custom_op"):
        return None
    name = _text(d.args[0]) if d.args else None
    if not name or "::" not in name:
        return None
    given = _keyword(d, "device_types")
    keys = {EVERY} if given is None else (plain_keys(given) or set())
    return name, keys


def _registration(call: ast.Call, libs: dict, customs: dict) -> tuple[str, set[str]] | None:
    """(``"ns::op"``, keys) of an ``impl`` or ``register_kernel`` call, else None."""
    parts = dotted_parts(call.func) or []
    if not parts or parts[-1] not in ("impl", "register_kernel"):
        return None
    args = call.args
    first = _text(args[0]) if args else None
    if parts[-1] == "register_kernel":
        if len(parts) == 2 and parts[0] in customs:  # @op.register_kernel("cpu")
            name, keys = customs[parts[0]], args[0] if args else _keyword(call, "device_types")
        else:
            name, keys = first, args[1] if len(args) > 1 else _keyword(call, "device_types")
    elif first and "::" in first:  # torch.library.impl("ns::op", types)
        name, keys = first, args[1] if len(args) > 1 else _keyword(call, "types")
    elif len(parts) == 2 and parts[0] in libs and first:  # lib.impl("op", fn, key)
        name = f"{libs[parts[0]]}::{first}"
        keys = args[2] if len(args) > 2 else _keyword(call, "dispatch_key")
    elif args and isinstance(args[0], ast.Name) and args[0].id in libs and len(args) > 1:
        name = f"{libs[args[0].id]}::{_text(args[1]) or ''}"  # torch.library.impl(lib, "op", key)
        keys = args[2] if len(args) > 2 else _keyword(call, "dispatch_key")
    else:
        return None
    found = plain_keys(keys) if keys is not None else None
    return (name, found) if name and "::" in name and found else None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def plain_keys(value: ast.expr) -> set[str] | None:
    """The keys a registration names plainly (lower-cased), None where one is not a string
    (also ``kinds.kernels``' reading of a module's own registrations)."""
    items = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
    keys = {t.lower() for i in items if (t := _text(i))}
    return keys if keys and len(keys) == len(items) else None


def cuda_only(keys: set[str]) -> bool:
    return keys - NO_DEVICE == {"cuda"}
