"""Names a file binds to another project's library that runs on no accelerator but CUDA
(``[libraries]`` of ``cuda_intent.toml``: CuPy, cuCIM, kvikio, TensorRT, PyG's CPU-and-CUDA
operator libraries, ...), and where the file uses them.

A binding is an import (``import cupy as cp``, ``from cucim.skimage import measure``), the
targets of an assignment whose value is a call naming such a module by a string (MONAI's ``cp,
has_cp = optional_import("cupy")``: the module and the flag that says it is there;
``importlib.import_module("tensorrt")``), a name imported from the project under the library's
own name (``from torch_geometric.typing import torch_scatter``), or a name set to a constant in a
``try`` that imports one (``HAS_CUPY = True``, and ``False`` in its handler). A name its scope
also binds to anything else is no evidence: its spelling is the author's. A use (a load of the
name), an import of the library in the code a check guards (``if src.is_cuda: import cudf``),
and a call of the library's operators (``torch.ops.torch_sparse.spmm_sum``) are CUDA work that
stays (``remaining``): the library takes no other accelerator's memory, so a device check that
selects the code using it stays CUDA's."""

from __future__ import annotations

import ast
import re

from patches.generate.intent.data import cuda_build, cuda_environment, cuda_library
from patches.generate.intent.nodes import COMPS, Span, span_of


def _bound_by(node) -> list[tuple[str, str]]:
    if isinstance(node, ast.Import):
        return [
            ((a.asname or a.name).split(".")[0], lib)
            for a in node.names
            if (lib := cuda_library(a.name))
        ]
    if isinstance(node, ast.ImportFrom) and node.module:
        # from the library, or the library's own module re-exported by the project under its
        # name (PyG's `from torch_geometric.typing import torch_scatter`)
        # (and ``from numba import cuda``: the library is the module's own submodule)
        lib = cuda_library(node.module) if not node.level else None
        return [
            (a.asname or a.name, found)
            for a in node.names
            if a.name != "*"
            and (
                found := lib
                or (not node.level and cuda_library(f"{node.module}.{a.name}"))
                or cuda_library(a.name)
                or _vendored(node.module, a.name)
            )
        ]
    if isinstance(node, ast.Assign):
        lib = _named_module(node.value) if isinstance(node.value, ast.Call) else None
        lib = lib or _environment(node.value)
        if lib:
            return [
                (n.id, lib) for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)
            ]
    if isinstance(node, ast.Try):
        libs = [
            lib
            for st in node.body
            if isinstance(st, (ast.Import, ast.ImportFrom))
            for _, lib in _bound_by(st)
        ]
        if libs:  # the flags it sets, in its body and its handlers (`HAS_CUPY = False`)
            blocks = [node.body, *(h.body for h in node.handlers), node.orelse]
            return [
                (t.id, libs[0])
                for block in blocks
                for st in block
                if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant)
                for t in st.targets
                if isinstance(t, ast.Name)
            ]
    return []


def _vendored(module: str, name: str) -> str | None:
    """A listed module of a library (a dotted entry: ``mmcv.parallel.scatter``) that a project
    ships inside its own package (xinference's ControlNet annotators: ``from
    annotator.mmpkg.mmcv.parallel import scatter``, round 42). A top-level library's name alone
    is no evidence there: a project's own ``flashinfer.py`` is its backend, not the library."""
    parts = module.split(".")
    for i in range(1, len(parts)):
        tail = ".".join(parts[i:])
        lib = cuda_library(tail) or cuda_library(f"{tail}.{name}")
        if lib and "." in lib:
            return lib
    return None


def _named_module(call: ast.Call) -> str | None:
    """The listed library a call's first argument names as a string (``optional_import("cupy")``)."""
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return cuda_library(first.value)
    return None


def _environment(value: ast.expr) -> str | None:
    """The CUDA environment variable a value reads (``os.environ.get("CUDA_VISIBLE_DEVICES",
    "").replace(" ", "")``, ``os.getenv(...)``, ``os.environ[...]``), or None."""
    env = cuda_environment()
    for n in ast.walk(value):
        if isinstance(n, ast.Call) and n.args:
            key, reader, tails = n.args[0], n.func, _GETENV
        elif isinstance(n, ast.Subscript):
            key, reader, tails = n.slice, n.value, ("environ",)
        else:
            continue
        # the key first: unparsing every call of every assignment would cost each file
        if isinstance(key, ast.Constant) and key.value in env:
            if ast.unparse(reader).endswith(tails):
                return key.value
    return None


_GETENV = ("environ.get", "getenv")


def _builds(ctx) -> list[tuple[Span, str]]:
    """A requirement of a CUDA build: pinned anywhere (``"onnxruntime-gpu>=1.18"``), or
    handed to an installer (``check_requirements("paddlepaddle-gpu")``, an arm of a pick
    too): the code that installs it runs CUDA's build."""
    found: dict[Span, str] = {}
    for n in ctx.nodes:
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            name = cuda_build(n.value)
            if name:
                found[span_of(n)] = name
        elif isinstance(n, ast.Call) and _INSTALLER.search(_last_name(n.func)):
            for a in (a for arg in n.args for a in ast.walk(arg)):
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    name = cuda_build(a.value, installer=True)
                    if name:
                        found[span_of(a)] = name
    return [(span, f"{name} (a build for CUDA)") for span, name in found.items()]


def _last_name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


_INSTALLER = re.compile(r"(?i)requir|install|^pip")


def library_uses(ctx) -> list[tuple[Span, str]]:
    """(span, "name (library)") of every load of a name that resolves (``ctx.binding``) to a scope
    whose every binding of it is a library binding, and of every import of a listed library
    (PyG's ``if src.is_cuda: import cudf``), sorted. A function's own ``distance_transform_edt
    = optional_import("cucim...")`` counts there, beside a module function of that name."""
    libs: dict[tuple[int, str], list[str]] = {}
    out: list[tuple[Span, str]] = []
    built = _cuda_built(ctx)
    tree = getattr(ctx, "tree_index", None)
    exts = tree.cuda_extensions() if tree is not None else frozenset()
    parts = tree.module_parts() if tree is not None else None
    rocm: dict[tuple[int, str], int] = {}
    for node in ctx.nodes:
        for name in _rocm_binding(node):
            key = (id(ctx.scope_at(node.lineno)), name)
            rocm[key] = rocm.get(key, 0) + 1
        found = (
            _bound_by(node)
            or _built_binding(node, built)
            or _extension(node, exts)
            or _compiled(node, parts)
        )
        if found and isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append((span_of(node), f"import {found[0][1]} (no accelerator but CUDA)"))
        scope = ctx.scope_at(node.lineno) if found else None
        for name, lib in found:
            # `global transformer_engine` then `import transformer_engine` in a loader: the
            # module's name (thunder's TransformerEngine executor, round 36)
            at = ctx.module if name in scope.globals else scope
            libs.setdefault((id(at), name), []).append(lib)
    out += [
        (span_of(n), f"torch.ops.{n.attr} ({lib}: no accelerator but CUDA)")
        for n in ctx.nodes
        if isinstance(n, ast.Attribute)
        and (lib := cuda_library(n.attr))  # before unparsing: most attributes are no library
        and ast.unparse(n.value) == "torch.ops"
    ]
    out += _named_choices(ctx)
    out += _builds(ctx)
    if not libs:
        return sorted(out)
    _derived(ctx, libs)
    names = {name for _, name in libs}
    raisers = _raisers(ctx.tree)
    for n in ctx.nodes:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names:
            # unbound in the file's scopes: a name a function made the module's (`global`)
            b = ctx.binding(n.lineno, n.id) or (ctx.module, set())
            found = libs.get((id(b[0]), n.id))
            rocm_too = rocm.get((id(b[0]), n.id), 0)
            bound = _bindings_in(b[0].node, n.id, raisers)
            if found and len(found) + rocm_too >= bound:
                out.append((span_of(n), f"{n.id} ({found[0]}: no accelerator but CUDA)"))
    return sorted(out + _wrappers(ctx, out))


def _named_choices(ctx) -> list[tuple[Span, str]]:
    """A listed library's module name assigned as a choice (thunder's ``self.fuser = "nvfuser"``
    when CUDA is there, an arm of a pick too): the code picks a library that runs on no
    accelerator but CUDA (round 36). A name handed to a call (``export(format="tensorrt")``) is
    the callee's option, no choice of a library."""
    named = [
        n
        for n in ctx.nodes
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and cuda_library(n.value) == n.value
    ]
    out = []
    parents = ctx.parents if named else {}
    for n in named:
        holder = parents.get(n)
        while isinstance(holder, ast.IfExp):
            holder = parents.get(holder)
        if isinstance(holder, (ast.Assign, ast.AnnAssign)) and holder.value is not None:
            out.append((span_of(n), f"{n.value!r} (names {n.value}: no accelerator but CUDA)"))
    return out


def _wrappers(ctx, uses: list[tuple[Span, str]]) -> list[tuple[Span, str]]:
    """Reads of a module-level function of the file whose body uses such a library (mmdet's
    ``def sigmoid_focal_loss(...): loss = _sigmoid_focal_loss(...)`` over ``mmcv.ops``, picked
    by ``calculate_loss_func = sigmoid_focal_loss`` under ``pred.is_cuda``): one step, by name."""
    wrapped: dict[str, str] = {}
    for fn in ctx.tree.body:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside = [w for sp, w in uses if fn.lineno < sp[0][0] <= fn.end_lineno]
            if inside:
                wrapped[fn.name] = inside[0]
    out = []
    for n in ctx.nodes if wrapped else ():
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in wrapped:
            b = ctx.binding(n.lineno, n.id)
            if b is not None and b[0] is ctx.module:
                out.append((span_of(n), f"{n.id} (wraps {wrapped[n.id]})"))
    return out


_BUILT = "an extension built from CUDA sources"
_LOADERS = ("load", "load_inline")  # torch.utils.cpp_extension's JIT builds


def _cuda_built(ctx) -> frozenset[str]:
    """Names the file binds to a JIT build of CUDA sources (basicsr's ``deform_conv_ext =
    load("deform_conv", sources=[..., "deform_conv_cuda_kernel.cu"])``, ``load_inline(...,
    cuda_sources=...)``): its kernels exist for CUDA alone."""
    names = set()
    for node in ctx.nodes:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        if _last_name(call.func) not in _LOADERS:
            continue
        cuda = any(k.arg == "cuda_sources" for k in call.keywords) or any(
            isinstance(c, ast.Constant)
            and isinstance(c.value, str)
            and c.value.endswith((".cu", ".cuh"))
            for c in ast.walk(call)
        )
        if cuda:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


_ROCM = re.compile(r"(?i)(^|[._])(amd|rocm|hip)([._]|$)")


def _rocm_binding(node) -> list[str]:
    """Names an import from a module named for ROCm binds (FlashAttention's ``from
    .flash_attn_triton_amd import interface_fa as flash_attn_gpu``, the other arm of its CUDA
    extension's import): ROCm's builds are CUDA's device type to torch, so beside a CUDA
    library's binding such a binding keeps the name CUDA's (round 39). Alone it is nothing."""
    if isinstance(node, ast.ImportFrom) and node.module and _ROCM.search(node.module):
        return [a.asname or a.name for a in node.names]
    return []


def _extension(node, exts: frozenset[str]) -> list[tuple[str, str]]:
    """An import of a module the tree builds as a ``CUDAExtension`` (``TreeIndex.cuda_extensions``:
    FlashAttention's ``import flash_attn_2_cuda as flash_attn_gpu``, round 38)."""
    if not exts:
        return []
    if isinstance(node, ast.Import):
        return [((a.asname or a.name).split(".")[0], a.name) for a in node.names if a.name in exts]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [
            (a.asname or a.name, f"{node.module}.{a.name}")
            for a in node.names
            if node.module in exts or f"{node.module}.{a.name}" in exts
        ]
    return []


_COMPILED = re.compile(r"^_C$|^_ext$|._cuda$")  # a module's name
_COMPILED_NOT = ("torch", "functorch")  # torch's own `_C` holds every backend's bindings
_PREBUILT = "the tree's compiled extension"


def _compiled(node, parts: frozenset[str] | None) -> list[tuple[str, str]]:
    """A name bound to the tree's own compiled extension, a module the tree holds no source of:
    ``from detectron2 import _C``, ``import MinkowskiEngineBackend._C as MEB``, ``import
    selective_scan_cuda``, ``from ._C import deform_conv_forward``, mmcv's ``ext_module =
    ext_loader.load_ext("_ext", [...])``. Its kernels are the ones its build compiles, the CPU's
    and CUDA's (ROCm's being CUDA's device type to torch); a device test in front of it sends
    CUDA tensors there and no other accelerator's (vendored detectron2's deformable
    convolution, mmcv's fused bias-leaky-ReLU, round 42). A file rewritten alone (no tree:
    ``parts`` None) goes by the name."""
    parts = parts or frozenset()
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
        if _last_name(node.value.func) == "load_ext":
            return [(t.id, _PREBUILT) for t in node.targets if isinstance(t, ast.Name)]
        return []
    if isinstance(node, ast.Import):
        return [
            (a.asname or a.name, _PREBUILT)
            for a in node.names
            if (a.asname or "." not in a.name) and _extension_module(a.name, parts)
        ]
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        head = module if node.level == 0 else ""
        if module and _extension_module(module, parts, head):
            return [(a.asname or a.name, _PREBUILT) for a in node.names if a.name != "*"]
        return [
            (a.asname or a.name, _PREBUILT)
            for a in node.names
            if a.name in ("_C", "_ext") and _extension_module(a.name, parts, head)
        ]
    return []


def _extension_module(dotted: str, parts: frozenset[str], head: str | None = None) -> bool:
    """``dotted`` names a module whose last name says compiled and the tree has no source of."""
    name = dotted.rsplit(".", 1)[-1]
    first = (dotted if head is None else head).split(".", 1)[0]
    return bool(_COMPILED.search(name)) and name not in parts and first not in _COMPILED_NOT


def _built_binding(node, built: frozenset[str]) -> list[tuple[str, str]]:
    """The build's own assignment, and an import of the same name in the file (the prebuilt
    extension the file takes where it does not build it: ``from . import deform_conv_ext``)."""
    if not built:
        return []
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
        if _last_name(node.value.func) in _LOADERS:
            return [
                (t.id, _BUILT) for t in node.targets if isinstance(t, ast.Name) and t.id in built
            ]
        return []
    if isinstance(node, ast.ImportFrom):
        return [(a.asname or a.name, _BUILT) for a in node.names if (a.asname or a.name) in built]
    return []


def _derived(ctx, libs: dict) -> None:
    """A name set from a name bound to a CUDA environment variable holds its ids too
    (``visible = [...cvd.split(",")...]``): bound alike, in source order."""
    env = cuda_environment()
    for node in ctx.nodes:
        if not isinstance(node, ast.Assign):
            continue
        scope = id(ctx.scope_at(node.lineno))
        read = [
            lib
            for n in ast.walk(node.value)
            if isinstance(n, ast.Name)
            for lib in libs.get((scope, n.id), ())
            if lib in env
        ]
        for t in node.targets if read else ():
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    libs.setdefault((scope, n.id), []).append(read[0])


def _none_stand_in(x: ast.AST, raisers: frozenset[str] = frozenset()) -> bool:
    """``name = None``, or ``name = f`` where ``f`` is a module function that only raises
    (AutoGPTQ's ``except ImportError as e: make_q4 = error_raiser_exllama``, round 39)."""
    value = x.value if isinstance(x, ast.Assign) else None
    stand_in = (isinstance(value, ast.Constant) and value.value is None) or (
        isinstance(value, ast.Name) and value.id in raisers
    )
    return stand_in and all(isinstance(t, ast.Name) for t in x.targets)


def _raisers(tree: ast.Module) -> frozenset[str]:
    """The file's functions whose body (past a docstring) is one ``raise`` (one an ``except``
    defines too)."""
    out = set()
    for d in ast.walk(tree):
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [
                s
                for s in d.body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            ]
            if len(body) == 1 and isinstance(body[0], ast.Raise):
                out.add(d.name)
    return frozenset(out)


def _bindings_in(scope: ast.AST, name: str, raisers: frozenset[str] = frozenset()) -> int:
    """How often ``scope`` (a module, function or class) binds ``name`` itself: parameters,
    stores, imports, definitions (not in the scopes nested in it). ``name = None`` is not one:
    an optional import's stand-in (nemo's ``except ImportError: rmsnorm_fn = None``) leaves the
    name the library's wherever it is used."""
    count = 0
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        count += sum(1 for x in params if x is not None and x.arg == name)
    todo = list(scope.body) if isinstance(getattr(scope, "body", None), list) else []
    while todo:
        x = todo.pop()
        if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            count += x.name == name
            continue
        if isinstance(x, (ast.Lambda, *COMPS)) or _none_stand_in(x, raisers):
            continue
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
            count += x.id == name
        elif isinstance(x, (ast.Import, ast.ImportFrom)):
            count += sum(1 for a in x.names if (a.asname or a.name).split(".")[0] == name)
        todo += ast.iter_child_nodes(x)
    return count
