"""``x.cuda()`` (HN501) in a script that has no device variable at all, the shape of the
classic tutorials (``net.cuda()``, ``inputs, labels = inputs.cuda(), labels.cuda()``)::

    net.cuda()                          device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
                                 ->     net.to(device)

The script gets one module-level ``device``, written after its imports (before the first
``.cuda()``, so it is bound before any of them runs), and every ``x.cuda()`` /
``x.cuda(non_blocking=True)`` becomes ``x.to(device[, ...])``. On CUDA that is the current CUDA
device as before; without an accelerator the CPU, so the script runs everywhere. Only where the
file binds no ``device`` anywhere (else ``MethodToDevice`` uses the one in scope, or leaves the
call) and is not a test module or a library package ``__init__``.
"""

from __future__ import annotations

import ast
import functools

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.families.base import is_test_file
from patches.generate.codemods.families.idioms_common import (
    API_TYPE,
    CUDA_DEVICE_STR,
    CURRENT,
    api_target,
    cuda_call_to,
    expr,
    insert_device_line,
    specs_at,
    string_value,
    type_or_cpu,
)
from patches.generate.codemods.families.method_to_device import MethodToDevice

NAME = "device"
_CUDA_METHOD = m.Call(func=m.Attribute(attr=m.Name("cuda")))
# keyword arguments whose CUDA device string a script gets in place (accelerator, else "cpu")
IN_PLACE_KEYWORDS = frozenset({"map_location", "device"})
# where a script picks its device with no name for it (idioms_device's script defaults)
DEFAULT_DEVICE_CALLS = frozenset({"torch.set_default_device"})
SCRIPT_DEFAULT_KEYWORDS = frozenset({"device_map"})  # Hugging Face's from_pretrained


@functools.lru_cache(maxsize=16)
def _binds_device(tree: ast.Module) -> bool:
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id == NAME and isinstance(n.ctx, ast.Store):
            return True
        if isinstance(n, ast.arg) and n.arg == NAME:
            return True
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == NAME for a in n.names):
                return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == NAME:
            return True
    return False


def _sets_torch_state(stmt: ast.stmt) -> bool:
    """``torch.set_float32_matmul_precision("high")``, ``torch.backends.x.y(...)``,
    ``torch.use_deterministic_algorithms(True)``: a call that stands for a setting. Other families
    write such a call for a module-level assignment (``torch.backends.cuda.matmul.allow_tf32 =
    True``), which is no top-level code; counting the call would make a library module a script
    on the second run (not idempotent)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    name = ast.unparse(stmt.value.func)
    last = name.rsplit(".", 1)[-1]
    return name.startswith("torch.backends.") or (
        name.count(".") == 1 and name.startswith("torch.") and last.startswith(("set_", "use_"))
    )


def is_script(ctx) -> bool:
    """A program, not a library module: not a test or a package ``__init__``, it runs code at
    the top level (``if __name__ == "__main__":``, or calls outside any function other than
    torch settings, see ``_sets_torch_state``), and no other file of the tree imports it
    (``torch/sparse/_triton_ops_meta.py`` has a ``__main__`` block and is a library module)."""
    if is_test_file(ctx.path) or ctx.path.endswith("__init__.py"):
        return False
    if not _runs_code(ctx.tree):
        return False
    index = getattr(ctx, "tree_index", None)
    return index is None or not index.imported(ctx.path)


def _runs_code(tree: ast.Module) -> bool:
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test):
            return True
        if _sets_torch_state(stmt):
            continue
        if isinstance(stmt, (ast.Expr, ast.For, ast.While, ast.With)) and any(
            isinstance(n, ast.Call) for n in ast.walk(stmt)
        ):
            return True
    return False


@functools.lru_cache(maxsize=16)
def _passes_cuda_device(tree: ast.Module) -> bool:
    """A call is handed a plain ``"cuda"`` (``x.to("cuda")``, ``torch.device("cuda")``): the
    device-literal family would rewrite it to a ``device`` bound before it, so a ``device`` this
    family introduced would change that site on a second run (not idempotent). Such a script
    keeps its ``.cuda()`` calls for a ``device`` of its own."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            for a in [*n.args, *(k.value for k in n.keywords)]:
                if isinstance(a, ast.Constant) and a.value == "cuda":
                    return True
    return False


def _eligible(ctx) -> bool:
    return is_script(ctx) and not _binds_device(ctx.tree) and not _passes_cuda_device(ctx.tree)


def gets_device(ctx) -> bool:
    """The script is one this family gives a ``device`` (accelerator or "cpu"): a CPU path."""
    return _eligible(ctx) and any(_plain(n) for n in ctx.nodes)


def ports_in_place(ctx) -> bool:
    """The script gets a CUDA device string in place (``on_literal``): a CPU path, as the
    ``device`` line of ``gets_device`` is. Read from the file, not from what the gate lets
    through: a sync guarded for a site the gate then keeps is still the same call on CUDA."""
    return is_script(ctx) and _ports_in_place(ctx.tree)


@functools.lru_cache(maxsize=16)
def _ports_in_place(tree: ast.Module) -> bool:
    plain = any(_plain(n) for n in ast.walk(tree))
    for n in ast.walk(tree):
        if isinstance(n, ast.With) and any(_cuda(i.context_expr, True) for i in n.items):
            return True  # with torch.device("cuda"): a script default
        if not isinstance(n, ast.Call):
            continue
        places = [(k.arg, k.value) for k in n.keywords if k.arg in IN_PLACE_KEYWORDS]
        places += [("pick", k.value) for k in n.keywords if k.arg in SCRIPT_DEFAULT_KEYWORDS]
        func = ast.unparse(n.func) if n.args else ""
        if func.endswith(".to") or func in DEFAULT_DEVICE_CALLS:
            places.append(("pick" if func in DEFAULT_DEVICE_CALLS else None, n.args[0]))
        for key, value in places:
            if not _cuda(value, key == "pick"):
                continue
            if key in ("map_location", "pick") or not (plain or _binds_device(tree)):
                return True
    return False


def _cuda(node: ast.AST, device_call: bool = False) -> bool:
    """``"cuda"`` / ``"cuda:N"``, or with ``device_call`` also ``torch.device("cuda")`` (the
    value the script-default places get whole)."""
    if device_call and isinstance(node, ast.Call) and ast.unparse(node.func) == "torch.device":
        node = node.args[0] if len(node.args) == 1 and not node.keywords else None
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and CUDA_DEVICE_STR.fullmatch(node.value) is not None
    )


def _plain(call: ast.AST) -> bool:
    """``x.cuda()`` / ``x.cuda(non_blocking=...)``: no device argument."""
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "cuda"
        and not call.args
        and all(k.arg == "non_blocking" for k in call.keywords)
    )


def _after_imports(ctx) -> ast.stmt | None:
    """The first top-level statement after the docstring and the imports."""
    for i, stmt in enumerate(ctx.tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        return stmt
    return None


def _top_statement(ctx, line: int) -> ast.stmt | None:
    for stmt in ctx.tree.body:
        if stmt.lineno <= line <= stmt.end_lineno:
            return stmt
    return None


class ScriptDevice(MethodToDevice):
    """``MethodToDevice`` plus the script's own ``device`` where it has none (module docstring)."""

    def __init__(self) -> None:
        self.anchor: int | None | bool = False  # False: not computed; None: not this shape

    def _anchor(self, ctx, lines: frozenset[int]) -> int | None:
        """The first line of the top-level statement holding the first plain ``.cuda()`` site."""
        if self.anchor is False:
            self.anchor = None
            if _eligible(ctx):
                sites = sorted(n.lineno for n in ctx.nodes if _plain(n) and n.lineno in lines)
                top = _after_imports(ctx) if sites else None
                if top is not None and top.lineno <= sites[0]:
                    decorators = [d.lineno for d in getattr(top, "decorator_list", [])]
                    self.anchor = min([top.lineno, *decorators])
        return self.anchor

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        """The anchor statement joins the step (and is one region: the ``device`` line is
        written before it)."""
        start = self._anchor(ctx, lines)
        top = _top_statement(ctx, start) if start is not None else None
        if top is None:
            return lines
        ctx.blocks.add((start, top.end_lineno))
        return lines | {start}

    def on_call(self, eng, original, updated):
        if m.matches(original, _CUDA_METHOD) and is_script(eng.ctx):
            new = _indexed(eng, original, updated)
            if new is not None:
                return new
        if self.anchor in (None, False) or not m.matches(original, _CUDA_METHOD):
            return super().on_call(eng, original, updated)
        specs = eng.specs_for(self.name, original)
        new = cuda_call_to(updated, NAME) if specs else None
        if new is None:
            return super().on_call(eng, original, updated)
        eng.done(specs[0], original)
        return new

    def on_literal(self, eng, original, updated):
        """``torch.load(..., map_location="cuda:0")`` in a script: the accelerator's device of
        that index, the CPU without one (the script's tensors go there too), so a ported
        script loads its checkpoint on a CPU-only machine. Also ``x.to("cuda")`` (the
        inference posts' ``inputs.to("cuda")``) and ``device="cuda"`` (a benchmark's
        ``q = torch.randn(..., device="cuda")``) in a script with no ``device`` bound before it
        and no plain ``.cuda()`` (which would get this family's ``device`` line): the same
        value in place."""
        parent = eng.parent(original)
        keyword = parent.keyword.value if isinstance(parent, cst.Arg) and parent.keyword else None
        if not (
            isinstance(parent, cst.Arg)
            and (keyword in IN_PLACE_KEYWORDS or _to_arg(eng, original))
            and is_script(eng.ctx)
        ):
            return None
        if keyword != "map_location" and (
            eng.ctx.bound_before(eng.line(original), NAME)
            or any(_plain(n) for n in ast.walk(eng.ctx.tree))
        ):
            return None  # the device-literal family's `device`, or this family's device line
        value = string_value(original)
        found = CUDA_DEVICE_STR.fullmatch(value) if value is not None else None
        specs = [
            s for fam in ("device-literal", "device-defaults") for s in specs_at(eng, original, fam)
        ]
        if found is None or not specs:
            return None
        eng.done(specs[0], original)
        if found.group(1) is None:
            return type_or_cpu(eng, specs[0], original)
        index = found.group(1)
        return expr(
            eng,
            specs[0],
            original,
            f'f"{{{CURRENT}.type}}:{index}" if torch.accelerator.is_available() else "cpu"',
            f'f"{{{API_TYPE}}}:{index}" if {API_TYPE} != "cpu" else "cpu"',
        )

    def on_node(self, eng, original, updated):
        """The ``device`` statement, before the anchor statement (its region is parsed alone, at
        module level: the anchor is the region's first statement)."""
        if not isinstance(original, cst.Module) or self.anchor in (None, False):
            return None
        if not original.body or eng.line(original.body[0]) != self.anchor:
            return None
        specs = [s for s, _ in eng.gated if s.family == self.name]
        if not specs:
            return None
        sites = {n.lineno for n in ast.walk(eng.ctx.tree) if _plain(n)}
        if not any(eng.fixes(s.rule, ln) for s in specs for ln in sites):
            return None  # the gate keeps every plain .cuda(): a device line nothing would use
        return insert_device_line(eng, specs[0], original, updated, NAME)


def _to_arg(eng, node) -> bool:
    """``node`` is the first positional argument of a ``.to(...)`` call."""
    arg = eng.parent(node)
    call = eng.parent(arg) if isinstance(arg, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "to"
        and arg.keyword is None
        and not arg.star
        and call.args[0] is arg
    )


def _indexed(eng, original, updated):
    """``x.cuda(i[, non_blocking=b])`` in a script (``model.cuda(args.gpu)``) ->
    ``x.to(torch.device(<accelerator type>, i)[, non_blocking=b])``: device ``i`` of the current
    accelerator (``.cuda(i)`` needed CUDA; this needs an accelerator, no more)."""
    specs = eng.specs_for(ScriptDevice.name, original)
    args = updated.args
    if not specs or not args or args[0].keyword is not None or args[0].star:
        return None
    if any(a.keyword is None or a.keyword.value != "non_blocking" for a in args[1:]):
        return None
    if eng.in_scope(original, "device_type"):
        return None  # MethodToDevice's own form: torch.device(device_type, i)
    acc = (
        "accelerator_api.device_type()"
        if api_target(specs[0])
        else "torch.accelerator.current_accelerator().type"
    )
    eng.add_needed_import("accelerator_api" if api_target(specs[0]) else "torch", node=original)
    eng.add_needed_import("torch", node=original)
    dev = cst.parse_expression(f"torch.device({acc}, 0)")
    dev = dev.with_changes(args=(dev.args[0], dev.args[1].with_changes(value=args[0].value)))
    eng.done(specs[0], original)
    return updated.with_changes(
        func=updated.func.with_changes(attr=cst.Name("to")),
        args=(args[0].with_changes(value=dev), *args[1:]),
    )
