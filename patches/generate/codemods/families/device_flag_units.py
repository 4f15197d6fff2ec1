"""The device-flag units (a switch parameter, a `self` attribute) and the AST tests they share."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from audits.resolve import module_name
from patches.generate.codemods.context import param_defaults
from patches.generate.codemods.families.base import is_test_file, placed_as_test
from patches.generate.codemods.reexports import Importers
from patches.generate.codemods.tree_index import Def, dotted
from patches.generate.intent.nodes import switch_decl

NEW = "device_type"
_CUDA_ATTRS = ("is_cuda",)


@dataclass
class ParamUnit:
    name: str  # the function's name
    param: str  # the switch's name
    defs: list[tuple[Def, int | None, bool | None]] = field(default_factory=list)  # index, default
    calls: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, name) to map
    why: str = ""  # non-empty: left
    # (file, first, last) lines of its declarations and calls: the switch sites it holds
    spans: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.why


@dataclass
class AttrUnit:
    cls: str
    attr: str
    sites: list[tuple[str, int]] = field(default_factory=list)  # (file, line) of reads/writes
    why: str = ""

    @property
    def ok(self) -> bool:
        return not self.why


@dataclass
class Analysis:
    params: dict[tuple[str, str], ParamUnit] = field(default_factory=dict)  # (name, param)
    attrs: dict[tuple[str, str], AttrUnit] = field(default_factory=dict)  # (class, attr)
    # (file, def line, def name) -> the converted unit whose switch that function declares
    defs: dict[tuple[str, int, str], ParamUnit] = field(default_factory=dict)
    # (file, call line, callee name) -> the converted unit the call goes to
    calls: dict[tuple[str, int, str], ParamUnit] = field(default_factory=dict)
    # (file, line, attr) -> the converted attribute unit read or written there on self
    attr_sites: dict[tuple[str, int, str], AttrUnit] = field(default_factory=dict)


def _bool_const(node) -> bool | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


def holds_tests(index, rel: str) -> bool:
    """``rel`` is a test module: named or placed as one (``is_test_file``) and, where only its
    name says so, defining a ``test*`` function or a ``Test*`` class. A ``test_utils.py`` of an
    importable package (fastai's ``synth_learner``) is its public API."""
    if not is_test_file(rel):
        return False
    if placed_as_test(rel):
        return True
    tree = index.tree(rel)
    return tree is None or any(
        (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"))
        or (isinstance(n, ast.ClassDef) and n.name.startswith("Test"))
        for n in tree.body
    )


def _is_public(d: Def, index) -> bool:
    """A def callers outside the tree may call: no part of its name private, or a function of a
    private module that a public package's ``__init__.py`` imports by name (pfn-extras'
    ``profiler/__init__.py``: ``from ._record import record_function``)."""
    if holds_tests(index, d.path):
        return False
    parts = d.module.split(".") + (d.cls[len(d.module) + 1 :].split(".") if d.cls else [])
    if not any(p.startswith("_") for p in parts + [d.name] if p):
        return True
    if d.cls or d.name.startswith("_"):
        return False
    importers = index.memo.setdefault("importers", Importers(index.root, index.prefix, index))
    by = importers.of(d.path)(d.name)
    exporter = module_name(by, index.prefix).split(".") if by.endswith("__init__.py") else ["_"]
    return not any(p.startswith("_") for p in exporter)


def _param_of(d: Def, names: tuple[str, ...]):
    """(the switch's name, its positional index in a call, its default) or None: a parameter
    named like the switch with a bool default or a ``bool`` annotation (or neither: then every
    caller must pass a truth value, checked with the calls)."""
    a = d.node.args
    positional = a.posonlyargs + a.args
    skip = 1 if d.kind in ("method", "classmethod") else 0
    defaults = param_defaults(d.node)
    found = []
    for i, x in enumerate(positional):
        if x.arg in names:
            found.append((x, i - skip if i >= skip else None))
    for x in a.kwonlyargs:
        if x.arg in names:
            found.append((x, None))
    if len(found) != 1:
        return None
    x, index = found[0]
    default = defaults.get(x.arg)
    if not switch_decl(x, default):
        return None  # a default that is no truth value, another annotation: not a switch
    return x.arg, index, _bool_const(default) if default is not None else None


def _binds(node: ast.AST, name: str) -> bool:
    """``name`` is bound anew inside ``node`` (assigned, deleted, a nested parameter)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return True
        if isinstance(n, ast.arg) and n.arg == name:
            return True
    return False


def _cuda_code(ctx, node: ast.AST) -> str:
    """The first CUDA device API ``node`` uses (``.cuda()``, ``torch.cuda.*``, ``.is_cuda``),
    as "`text` (line N)", or ""."""
    for n in ast.walk(node):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "cuda"
            and not _imported(ctx, n.func.value)
        ):
            return f"`{ast.unparse(n)[:60]}` (line {n.lineno})"  # a tensor's or module's
        if isinstance(n, ast.Attribute):
            if n.attr in _CUDA_ATTRS:
                return f"`{ast.unparse(n)[:60]}` (line {n.lineno})"
            d = dotted(n)
            q = ctx.qualify(n.lineno, d) if d else None
            if q and (q == "torch.cuda" or q.startswith("torch.cuda.")):
                return f"`{d}` (line {n.lineno})"
    return ""


def _imported(ctx, recv: ast.AST) -> bool:
    """``recv`` is rooted at an imported name (a library's ``paths.cuda()``, not a tensor's
    ``.cuda()`` method)."""
    d = dotted(recv)
    b = ctx.binding(recv.lineno, d.split(".")[0]) if d else None
    return b is not None and b[1] == {"import"}


def _stmt_of(parents, node) -> ast.AST:
    """The statement reading ``node``: a simple statement, or the whole compound statement
    whose test (or iterable, or context) it is in."""
    p = parents.get(node)
    while p is not None and not isinstance(p, ast.stmt):
        p = parents.get(p)
    return p if p is not None else node


def _refers(n: ast.AST, name: str) -> bool:
    """``n`` names ``name``: a loaded ``name`` or an attribute ``<x>.name``."""
    return (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)) or (
        isinstance(n, ast.Attribute) and n.attr == name
    )


def _by_name(call) -> bool:
    """``call`` is ``getattr``/``hasattr``/``setattr``: a member looked up by its name."""
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in ("getattr", "hasattr", "setattr")
    )


def _through_class(ref: ast.AST, hit: set) -> bool:
    """``Class.method(obj, ...)``: an instance method called with its ``self`` passed, so the
    switch's position is one further."""
    if not isinstance(ref, ast.Attribute) or any(d.kind != "method" for d in hit):
        return False
    recv = ref.value
    return not (
        (isinstance(recv, ast.Name) and recv.id in ("self", "cls"))
        or (isinstance(recv, ast.Call) and ast.unparse(recv.func) == "super")
    )


def _binds_any(node, name: str) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == name) or (isinstance(n, ast.arg) and n.arg == name)
        for n in ast.walk(node)
    )


def _flag_form(value: ast.expr) -> bool:
    """A value the device-flag family stores in its attribute: ``"cuda"``/``"cpu"`` (from
    ``True``/``False``), a converted switch (``device_type``), ``"cuda" if v else "cpu"``."""
    if isinstance(value, ast.Constant):
        return value.value in ("cuda", "cpu")
    if isinstance(value, ast.Name):
        return value.id == NEW
    return (
        isinstance(value, ast.IfExp)
        and isinstance(value.body, ast.Constant)
        and value.body.value == "cuda"
        and isinstance(value.orelse, ast.Constant)
        and value.orelse.value == "cpu"
    )


def converted_attr(tree: ast.Module, line: int) -> bool:
    """The class holding ``line`` stores ``self.device_type`` only in the device-flag family's
    forms (``_flag_form``): the attribute is a converted switch, a device type the object takes,
    whose ``== "cuda"`` test and stores stay as they are (a second run would port them)."""
    classes = [
        c
        for c in ast.walk(tree)
        if isinstance(c, ast.ClassDef) and c.lineno <= line <= c.end_lineno
    ]
    if not classes:
        return False
    cls = max(classes, key=lambda c: c.lineno)
    values = [
        n.value
        for n in ast.walk(cls)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(t := n.targets[0], ast.Attribute)
        and t.attr == NEW
        and isinstance(t.value, ast.Name)
        and t.value.id == "self"
    ]
    return bool(values) and all(_flag_form(v) for v in values)
