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
holding the site; a module's top level is no unit (the library may serve other functions), but a
test module's own statements are (a test written as a script, round 38), and its
``if __name__ == "__main__":`` block is: a demo of the module that calls the module's own
functions over the library (mamba-ssm's CuTe step kernel benchmarks on ``torch.device("cuda:0")``,
round 36). A call of an operator the tree registers for CUDA alone is such work too
(``torch.ops.quanto.gemm_f16i4_marlin``, round 37), and so is a call of another file's
function whose code calls through such a library, not under a device test (MegaBlocks'
benchmarks hand their tensors to ``ops.histogram``, an autograd function over its own
``megablocks_ops`` extension, round 39)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import inside, main_blocks, own_returns, span_of
from patches.generate.intent.ops import library_op
from patches.generate.intent.paths import is_test_file
from patches.generate.intent.probe import Evidence, Probe
from patches.generate.intent.reach import reach_elsewhere

KIND = "cuda-library-unit"
SUMMARY = "it is in a function whose work is a CUDA-only library's"

_LIBRARY = "no accelerator but CUDA)"  # ``libraries.py``'s words for a use of the library


def detect(p: Probe) -> list[Evidence]:
    fn = p.functions[0] if p.functions else _main_block(p) or _script_test(p)
    if fn is None:
        return []
    demo = not p.functions  # a module's demo: its calls of the module's wrappers count too
    where = ((1, 0), (10**9, 0)) if fn is p.ctx.tree else span_of(fn)
    uses = [(sp, w) for sp, w in p.index.libraries_used_in(where) if _library(w, demo)]
    if fn is p.ctx.tree:  # a test module's own statements, not its definitions'
        uses = [(sp, w) for sp, w in uses if not _in_definition(p, sp)]
    uses += [(sp, f"{q} (a kernel the tree has for CUDA only)") for sp, q in _ops(p, where)]
    for sp, what in uses:
        node = p.index.at.get(sp)
        if inside(sp, p.own) or not _work(p, node) or _optional(p, node, fn, uses):
            continue
        return [Evidence(KIND, sp[0][0], f"the function uses {what} (line {sp[0][0]})")]
    if fn is p.ctx.tree:
        return []
    found = _class_use(p, fn)
    if found:
        return [found]
    hits = reach_elsewhere(p.ctx, p.index.name_calls, span_of(fn), library=True)
    return [Evidence(KIND, line, f"the function's call {what}") for line, what in hits[:1]]


def _class_use(p: Probe, fn) -> Evidence | None:
    """A predicate method (every ``return`` answers a truth value) of a class whose methods do
    work through the library: the predicate says when that work runs, so its device test is
    the library's (vLLM's ``FlashInferPcieIpcAllReduce.should_use``: ``inp.is_cuda and ...``
    before ``all_reduce`` hands ``inp`` to FlashInfer, round 42). The library is the module's: a
    name the module binds, not one method's own import."""
    cls = p.index.parents.get(fn)
    if not isinstance(cls, ast.ClassDef) or not _predicate(fn):
        return None
    uses = [(sp, w) for sp, w in p.index.libraries_used_in(span_of(cls)) if _library(w, False)]
    for sp, what in uses:
        node = p.index.at.get(sp)
        if _module_bound(p, node) and _work(p, node) and not _optional(p, node, cls, uses):
            return Evidence(KIND, sp[0][0], f"its class uses {what} (line {sp[0][0]})")
    return None


def _module_bound(p: Probe, node) -> bool:
    """``node`` reads a name its module binds: the module is built on the library. One method's
    own import is that method's (Lightning's ``LightningModule.to_tensorrt`` imports
    ``torch_tensorrt``; its ``on_gpu`` is no predicate of TensorRT's)."""
    if not isinstance(node, ast.Name):
        return False
    bound = p.ctx.binding(node.lineno, node.id)
    return bound is None or bound[0] is p.ctx.module


def _predicate(fn) -> bool:
    """Every ``return`` of ``fn`` (none nested) answers a truth value: a constant True/False, a
    comparison, ``not``, ``and``/``or`` of such, or ``bool(...)``."""
    own = list(own_returns(fn))
    return bool(own) and all(_truth(r.value) for r in own)


def _truth(node) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bool)
    if isinstance(node, ast.BoolOp):
        return any(_truth(v) for v in node.values) and not any(
            isinstance(v, ast.Constant) and not isinstance(v.value, bool) for v in node.values
        )
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id == "bool"
    return isinstance(node, ast.Compare)


def _ops(p: Probe, where) -> list:
    """Calls in ``fn`` of operators the tree registers through ``torch.library`` for CUDA alone
    (optimum-quanto's Marlin benchmark, round 37)."""
    return [(sp, q) for sp, q in p.index.ops_called_in(where) if library_op(q)]


def _library(what: str, demo: bool) -> bool:
    """A use of the library, or, in a ``__main__`` demo, of a module function whose body uses it
    (``libraries._wrappers``: the demo calls the module's kernel launcher). In a function a
    wrapper is no work: it may use the library on an optional path (MONAI's connected
    components under ``has_cp``)."""
    return what.endswith(_LIBRARY) or (demo and what.endswith(_LIBRARY + ")"))


def _main_block(p: Probe) -> ast.If | None:
    """The module's ``__main__`` block holding the site: a demo or benchmark of the module, a
    unit of its own."""
    stmt = p.stmt
    while stmt is not None and p.index.parents.get(stmt) is not p.ctx.tree:
        stmt = p.index.parents.get(stmt)
    return stmt if isinstance(stmt, ast.If) and stmt in main_blocks(p.ctx.tree) else None


def _script_test(p: Probe) -> ast.Module | None:
    """A test module's top level, where the site sits: a test written as a script (AutoAWQ's
    ``tests/test_dequantization.py`` builds its tensors on ``device="cuda"`` at the top level
    and hands them to ``awq_ext``, round 38)."""
    return p.ctx.tree if is_test_file(p.ctx.path) else None


def _in_definition(p: Probe, sp) -> bool:
    return any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and inside(sp, span_of(s))
        for s in p.ctx.tree.body
    )


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
