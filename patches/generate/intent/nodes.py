"""Positions and small ``ast`` shape tests shared by the index, the gate and the kinds."""

from __future__ import annotations

import ast
import re

from audits.resolve import dotted_parts

CUDA_DEVICE_STR = re.compile(r"cuda(?::(\d+))?")

Pos = tuple[int, int]  # (line 1-based, column 0-based)
Span = tuple[Pos, Pos]
Site = tuple[str, int]  # (rule, line)

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SKIP_GATES = ("skipIf", "skipUnless", "skipif")  # unittest's and pytest.mark's skip decorators
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Match,
)


def span_of(nodes) -> Span:
    nodes = nodes if isinstance(nodes, list) else [nodes]
    return (nodes[0].lineno, nodes[0].col_offset), (nodes[-1].end_lineno, nodes[-1].end_col_offset)


def finding_span(f) -> Span:
    return (f.line, f.col - 1), (f.end_line, f.end_col - 1)


def inside(inner: Span, outer: Span) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def compound(stmt) -> bool:
    return isinstance(stmt, _COMPOUND)


def header(stmt: ast.stmt) -> list[ast.AST]:
    """The parts of a compound statement that always run when it does (its header); [] for a
    simple statement, a definition or a ``try``."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    return []


def tree_path(ctx) -> str:
    """The file's path as its module names it (``torch/cuda/__init__.py`` also when the scanned
    root is the ``torch`` package itself; ``ctx.module_name`` is ``audits.resolve``'s), else its
    path."""
    mod = getattr(ctx, "module_name", "")
    if not mod:
        return ctx.path
    tail = "/__init__.py" if ctx.path.endswith("__init__.py") else ".py"
    return mod.replace(".", "/") + tail


def qualified(ctx, node: ast.AST) -> str | None:
    """The qualified name of a dotted reference through the file's imports, else None."""
    parts = dotted_parts(node)
    return ctx.qualify(node.lineno, ".".join(parts)) if parts else None


def called(ctx, node: ast.AST) -> str | None:
    """The qualified name of ``node``'s callee when it is a call, else of ``node`` itself."""
    return qualified(ctx, node.func if isinstance(node, ast.Call) else node)


def is_call(ctx, node: ast.AST, name: str) -> bool:
    """``node`` is a call of the qualified ``name`` through the file's imports."""
    return isinstance(node, ast.Call) and qualified(ctx, node.func) == name


def placement_call(node) -> ast.Call | None:
    """``node`` when it is an ``x.cuda(...)`` placement call, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node if node.func.attr == "cuda" else None
    return None


def plain_cuda_device(node: ast.AST, kind: str = "cuda") -> bool:
    """``torch.device("cuda")`` (or ``kind``'s), spelt so, with one plain argument."""
    return (
        isinstance(node, ast.Call)
        and ast.unparse(node.func) == "torch.device"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == kind
    )


def plain_cuda(node: ast.AST, kind: str = "cuda") -> bool:
    """``"cuda"`` or ``torch.device("cuda")``: the plain CUDA device (or ``kind``'s), a string
    or a device."""
    return (isinstance(node, ast.Constant) and node.value == kind) or plain_cuda_device(node, kind)


def cpu_literal(node: ast.AST) -> bool:
    """``"cpu"`` or ``torch.device("cpu")``."""
    return plain_cuda(node, "cpu")


def on_cuda(test: ast.AST) -> bool:
    """``test`` holds only for something on CUDA: ``x.is_cuda``, ``x.type == "cuda"``, an
    ``and`` holding one, or ``not`` of a test that holds off CUDA."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And) and any(on_cuda(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return off_cuda(test.operand)
    if isinstance(test, ast.Attribute):
        return test.attr == "is_cuda"
    return _compares_cuda(test, ast.Eq)


def off_cuda(test: ast.AST) -> bool:
    """``test`` holds for something off CUDA: ``not`` of a test that asks about CUDA (``not
    x.is_cuda``, ``not all(t.is_cuda for t in ts)``), ``x.type != "cuda"``, or an ``or``
    holding one (a kernel's refusal, the early exit before CUDA-only code)."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.Or) and any(off_cuda(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        return on_cuda(inner) or any(
            isinstance(n, ast.Attribute) and n.attr == "is_cuda" for n in ast.walk(inner)
        )
    return _compares_cuda(test, ast.NotEq)


def _compares_cuda(test: ast.AST, op: type) -> bool:
    """``x == "cuda"`` (``op``: ``ast.Eq``) or ``x != "cuda"`` (``ast.NotEq``), either side."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], op)
        and any(
            isinstance(c, ast.Constant) and c.value == "cuda"
            for c in [test.left, *test.comparators]
        )
    )


def cuda_literal(ctx, node: ast.AST) -> str | None:
    """``"cuda"``/``"cuda:N"`` -> "str"; ``torch.device("cuda"[, N])``/``torch.device("cuda:N")``
    -> "device"; anything else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "str" if CUDA_DEVICE_STR.fullmatch(node.value) else None
    if not (is_call(ctx, node, "torch.device") and not node.keywords and 1 <= len(node.args) <= 2):
        return None
    first = node.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    m = CUDA_DEVICE_STR.fullmatch(first.value)
    index = node.args[1] if len(node.args) == 2 else None
    if m and (
        index is None
        or (m.group(1) is None and isinstance(index, ast.Constant) and isinstance(index.value, int))
    ):
        return "device"
    return None


def exits(block) -> bool:
    """The block ends by leaving (return, raise, continue, break, a skip or exit call)."""
    last = block[-1] if block else None
    if isinstance(last, _EXITS):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        name = last_name(last.value.func)
        return "skip" in name.lower() or name in ("exit", "fail")
    return False


def last_name(func) -> str:
    """The last name of a callee (``self.assertRaisesRegex`` -> ``assertRaisesRegex``), or ""."""
    return getattr(func, "attr", None) or getattr(func, "id", None) or ""


def negative(test) -> bool:
    """``not X`` / ``X != "cuda"`` / ``X is not ...``: the CUDA side is the other branch."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return (
        isinstance(test, ast.Compare)
        and all(isinstance(o, (ast.NotEq, ast.IsNot, ast.NotIn)) for o in test.ops)
        # `torch.version.cuda is not None` asks "is this CUDA": the positive side; so does a
        # count's `torch.cuda.device_count() != 0`
        and not all(
            isinstance(c, ast.Constant)
            and (c.value in (None, False) or type(c.value) in (int, float))
            for c in test.comparators
        )
    )


def declared(fn, name: str) -> tuple[ast.arg, ast.expr | None] | None:
    """``(parameter, its default or None)`` of ``fn``'s parameter ``name``, or None."""
    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for arg, default in [*zip(pos, defaults), *zip(a.kwonlyargs, a.kw_defaults)]:
        if arg.arg == name:
            return arg, default
    return None


def _annotated(arg: ast.arg, name: str) -> bool:
    return isinstance(arg.annotation, ast.Name) and arg.annotation.id == name


def switch_decl(arg: ast.arg, default: ast.expr | None) -> bool:
    """A switch as the device-flag family (HN510) takes one: no default or a bool one, no
    annotation or ``bool`` (``cuda=False``, ``use_cuda: bool``, ``use_cuda``; not ``mode:
    CUDAInitMode``, not ``cuda="cuda:0"``)."""
    if default is not None and not (
        isinstance(default, ast.Constant) and isinstance(default.value, bool)
    ):
        return False
    return arg.annotation is None or _annotated(arg, "bool")


def tri_state_decl(arg: ast.arg, default: ast.expr | None) -> bool:
    """A switch with a third state, which the device-flag family never converts: ``cuda=None``
    ("True: to CUDA, False: to the CPU, None: leave it"), no annotation or ``Optional[bool]`` /
    ``bool | None``."""
    if not (isinstance(default, ast.Constant) and default.value is None):
        return False
    text = ast.unparse(arg.annotation) if arg.annotation is not None else "Optional[bool]"
    return text.replace(" ", "") in ("Optional[bool]", "bool|None", "None|bool")


def device_type_decl(arg: ast.arg, default: ast.expr | None) -> bool:
    """A device type the function takes: a ``str`` annotation, ``"cpu"`` or no default
    (``device_type: str = "cpu"``, the device-flag family's form of a former switch)."""
    cpu = default is None or (isinstance(default, ast.Constant) and default.value == "cpu")
    return _annotated(arg, "str") and cpu


def main_blocks(tree: ast.Module) -> list[ast.If]:
    """The module's top-level ``if __name__ == "__main__":`` blocks (a test that names
    ``"__main__"``): the code it runs as a program."""
    return [s for s in tree.body if isinstance(s, ast.If) and "__main__" in ast.unparse(s.test)]


def unpassed_defaults(call: ast.Call, fn) -> list[ast.expr]:
    """The default values of ``fn``'s parameters that ``call`` passes no argument for (none
    where it unpacks ``*args``/``**kwargs``, or where ``fn`` is a class)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return []
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    if positional and positional[0].arg in ("self", "cls") and isinstance(call.func, ast.Attribute):
        positional = positional[1:]
    named = {k.arg for k in call.keywords}
    with_default = positional[len(positional) - len(a.defaults) :]
    out = [
        d
        for i, (p, d) in enumerate(zip(with_default, a.defaults))
        if p.arg not in named and len(positional) - len(a.defaults) + i >= len(call.args)
    ]
    out += [d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None and p.arg not in named]
    return out


def param_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> dict[str, ast.expr]:
    """Parameter name -> its default value, for the parameters of ``fn`` that have one."""
    a = fn.args
    positional = [x.arg for x in a.posonlyargs + a.args]
    out = dict(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
    out.update({x.arg: d for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    return out


def own_returns(fn):
    """The ``return`` statements of ``fn``, not of functions or classes nested in it."""
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return):
            yield n
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo += list(ast.iter_child_nodes(n))
