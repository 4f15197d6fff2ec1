"""``cuda-kernels``: the site tests a tensor's device (``x.is_cuda``, ``x.device.type ==
"cuda"``) in a module that registers its kernels for CUDA only
(``@torch.library.custom_op(..., device_types="cuda")``, ``register_kernel(op, "cuda")``,
``lib.impl(name, fn, "CUDA")``). The test picks the path into those kernels: torchtitan's fused
MLA takes its Triton ops ``if x.is_cuda`` and falls back to eager otherwise, and its Helion rope
checks ``xq.is_cuda and ...`` before its CUDA-registered ops. Made neutral, another
accelerator's tensors reach an op with no kernel for them instead of the fallback (round 32).
So does a module that compiles its own kernels with a CUDA-only library (a function decorated
from ``[libraries]``: numba's ``@cuda.jit``): nemo's SpecAugment picks its numba kernel with
``if not x.is_cuda: return False`` in such a module (round 34). So does a module that calls an
operator the tree registers through ``torch.library`` for CUDA alone (``library_ops``):
optimum-quanto's AWQ and Marlin weight classes assert ``data.device.type == "cuda"`` before
``torch.ops.quanto.gemm_f16i4_awq`` (round 37)."""

from __future__ import annotations

import ast
import functools

from patches.generate.intent.data import cuda_library
from patches.generate.intent.library_ops import plain_keys
from patches.generate.intent.nodes import qualified
from patches.generate.intent.ops import library_op
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-kernels"
SUMMARY = "it picks the path into kernels its module registers or calls for CUDA only"

_RULES = frozenset({"HN504", "HN505"})
_REGISTRARS = ("custom_op", "register_kernel", "impl", "triton_op")


def detect(p: Probe) -> list[Evidence]:
    if getattr(p.f, "rule", "") not in _RULES:
        return []
    line = _registered(p.ctx.tree)
    if line:
        return [Evidence(KIND, line, f"the module registers kernels for CUDA only (line {line})")]
    jit = _compiled(p.ctx)
    if jit:
        return [
            Evidence(KIND, jit[1], f"the module compiles kernels with {jit[0]} (line {jit[1]})")
        ]
    called = next(((sp, q) for sp, q in p.index.op_calls if library_op(q)), None)
    if called:
        line, op = called[0][0][0], called[1].rsplit(".", 1)[-1]
        return [Evidence(KIND, line, f"the module calls {op}, a kernel the tree has for CUDA only")]
    return []


@functools.lru_cache(maxsize=32)
def _compiled(ctx) -> tuple[str, int] | None:
    """The first function the module decorates with a CUDA-only library's name (``@cuda.jit``
    after ``from numba import cuda``), as (decorator, line); None where there is none."""
    for node in ctx.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                name = qualified(ctx, dec.func if isinstance(dec, ast.Call) else dec)
                if name and cuda_library(name):
                    return name, node.lineno
    return None


@functools.lru_cache(maxsize=32)
def _registered(tree: ast.Module) -> int:
    """The line of the module's first registration of a kernel that the module registers for
    CUDA alone (a meta kernel aside: ``impl(op, f, "CPU")`` beside ``impl(op, f, "CUDA")`` is
    not), else 0."""
    keys: dict[str, set[str]] = {}
    first: dict[str, int] = {}
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        func = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
        if func not in _REGISTRARS:
            continue
        keyed = [k.value for k in n.keywords if k.arg in ("device_types", "dispatch_key")]
        placed = n.args[1:2] if func == "register_kernel" else n.args[2:3] if func == "impl" else []
        found = [k for v in [*keyed, *placed] if (k := plain_keys(v)) is not None]
        if not found:
            continue
        # the op: ``lib.impl(name, f, key)``'s first argument, ``torch.library.impl(lib, name,
        # key)``'s second, ``register_kernel(op, key)``'s first; each ``custom_op`` its own
        named = n.args[1:2] if ast.unparse(n.func).endswith("library.impl") else n.args[:1]
        op = ast.dump(named[0]) if named and func != "custom_op" else f"{func}@{n.lineno}"
        keys.setdefault(op, set()).update(*found)
        first[op] = min(first.get(op, n.lineno), n.lineno)
    lines = [first[op] for op, ks in keys.items() if ks - {"meta"} == {"cuda"}]
    return min(lines, default=0)
