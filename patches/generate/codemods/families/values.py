"""What a file's ``ast`` says about the values its names hold, and about device probes.

* ``stream_names(ctx)``: the names (a variable, or an attribute's last component such as
  ``self._mp_stream``'s ``_mp_stream``) that every binding in the file makes a stream and never
  ``None``: assigned a stream constructor or ``current_stream()``, annotated with a stream type,
  passed by that keyword (a dataclass field ``optim_stream=torch.cuda.Stream()``), or copied
  from another such name. ``with torch.cuda.stream(s):`` is ``with s:`` only for these:
  ``torch.cuda.stream(None)`` is a no-op where ``with None:`` raises.
* ``is_index(ctx, source, line)``: the expression is always an int device index (or None):
  ``t.get_device()``, ``d.index``, ``current_device()``, an int literal, a name every binding of
  which is one (``ctx.input_device = -1 if ... else i.get_device()``), an element of a list of
  them. ``with torch.cuda.device(x):`` is ``with torch.accelerator.device_index(x):`` only for
  these: ``device_index`` takes an int or None, where ``torch.cuda.device`` also took a device.
  Where the file-wide bindings cannot tell (a parameter annotated ``int | torch.device``), a
  plain name counts when every producer of it in the scope binding it is one (``producers``:
  a nested worker's parameter by its callers' arguments); ``is_stream`` reads them the same way.
* ``probed(ctx, line)``: the line is inside a ``try`` whose handler catches the error CUDA's
  constructor raises without a device, i.e. the code asks "is there a device?" by trying.
"""

from __future__ import annotations

import ast
import functools

from audits.resolve import dotted_parts
from patches.generate.codemods.families.producers import Element, element_of, parents, producers

STREAM_TYPES = frozenset(
    {"torch.cuda.Stream", "torch.cuda.streams.Stream", "torch.Stream", "torch.cuda.ExternalStream"}
)
STREAM_MAKERS = STREAM_TYPES | frozenset(
    {"torch.cuda.current_stream", "torch.accelerator.current_stream"}
)
# What ``torch.cuda.Stream()``/``Event().record()`` raise without CUDA, and what catches it.
_CAUGHT = frozenset({"Exception", "BaseException", "RuntimeError", "AssertionError"})


def _qual(ctx, node: ast.AST, line: int | None = None) -> str | None:
    parts = dotted_parts(node)
    if parts is None:
        return None
    return ctx.qualify(line or node.lineno, ".".join(parts))


def _key(target: ast.AST) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def _annotation_kind(ctx, ann: ast.AST) -> bool | None:
    """True: a stream type; False: anything else (``Optional[...]``, ``Any``); None: no annotation."""
    if ann is None:
        return None
    return _qual(ctx, ann) in STREAM_TYPES


class _Bindings(ast.NodeVisitor):
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.values: dict[str, list[ast.AST]] = {}  # name -> values bound to it
        self.typed: dict[str, list[bool]] = {}  # name -> annotation verdicts (a stream type)
        self.annotations: dict[str, list[ast.AST | None]] = {}  # name -> annotations
        self.loops: dict[str, list[ast.AST]] = {}  # loop variable -> iterables

    def _bind(self, target, value) -> None:
        key = _key(target)
        if key is not None:
            self.values.setdefault(key, []).append(value)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            if isinstance(t, (ast.Tuple, ast.List)):
                for e in t.elts:  # unpacking: the values are unknown
                    self._bind(e, None)
            else:
                self._bind(t, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        key = _key(node.target)
        if key is not None:
            self.typed.setdefault(key, []).append(bool(_annotation_kind(self.ctx, node.annotation)))
            self.annotations.setdefault(key, []).append(node.annotation)
        if node.value is not None:
            self._bind(node.target, node.value)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        verdict = _annotation_kind(self.ctx, node.annotation)
        self.typed.setdefault(node.arg, []).append(bool(verdict))
        self.annotations.setdefault(node.arg, []).append(node.annotation)

    def visit_For(self, node: ast.For) -> None:
        if isinstance(node.target, ast.Name):
            self.loops.setdefault(node.target.id, []).append(node.iter)
        else:
            for e in ast.walk(node.target):
                if isinstance(e, ast.Name):
                    self.loops.setdefault(e.id, []).append(None)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is not None:
            self.values.setdefault(node.arg, []).append(node.value)
        self.generic_visit(node)


@functools.lru_cache(maxsize=8)
def _bindings(ctx) -> _Bindings:
    b = _Bindings(ctx)
    b.visit(ctx.tree)
    return b


@functools.lru_cache(maxsize=8)
def _stream_names(ctx) -> frozenset[str]:
    b = _bindings(ctx)
    # a name bound to None anywhere in the file may be None, whatever its annotation says
    # (nemo's dataclass field ``stream: torch.cuda.Stream = None``, set only in a later hook)
    nones = {k for k, vs in b.values.items() if any(_is_none(v) for v in vs)}
    names = {k for k, v in b.typed.items() if v and all(v)} - nones
    poisoned = {k for k, v in b.typed.items() if not all(v)} | nones
    changed = True
    while changed:  # copies of stream names are streams too
        changed = False
        for key, values in b.values.items():
            if key in names or key in poisoned:
                continue
            if values and all(_is_stream_value(ctx, v, names) for v in values):
                names.add(key)
                changed = True
    return frozenset(names)


def _is_none(value) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _is_stream_value(ctx, value, names) -> bool:
    if isinstance(value, ast.Call):
        return _qual(ctx, value.func) in STREAM_MAKERS
    return isinstance(value, (ast.Name, ast.Attribute)) and _key(value) in names


def stream_names(ctx) -> frozenset[str]:
    return _stream_names(ctx)


def is_stream(ctx, source: str, line: int) -> bool:
    """The expression ``source`` (at ``line``) names a value the file only ever makes a stream:
    by the file's bindings of the name, or (a plain name) by every producer of it in its scope
    (``producers``: a nested function's parameter whose callers all pass streams and which is
    rebound only to a stream, ``if stream is None: stream = torch.cuda.current_stream(d)``)."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.Call):
        return _qual(ctx, node.func, line) in STREAM_MAKERS
    if isinstance(node, (ast.Name, ast.Attribute)) and _key(node) in _stream_names(ctx):
        return True
    return isinstance(node, ast.Name) and _scoped(
        ctx, _reads(ctx, node.id, line), _StreamCheck(ctx), set()
    )


def _reads(ctx, name: str, line: int) -> list[ast.Name]:
    """The reads of ``name`` on ``line`` in ``ctx.tree`` (where a parsed source's name is)."""
    return [
        n
        for n in ctx.nodes
        if isinstance(n, ast.Name)
        and n.id == name
        and n.lineno == line
        and isinstance(n.ctx, ast.Load)
    ]


def _scoped(ctx, names: list[ast.Name], check, seen: set) -> bool:
    """Every producer of each of ``names`` in its own scope passes ``check`` (a value:
    ``check.value(node, seen)``; an element of an iterable: ``check.elements(node, seen)``)."""
    if not names:
        return False
    for name in names:
        prods = producers(ctx, name, seen)
        if not prods:
            return False
        for p in prods:
            if isinstance(p, Element):
                where = element_of(p.iterable, p.path)
                if where is None:
                    return False
                iterable, rest = where
                if iterable is None:
                    if not check.counter:
                        return False
                elif rest or not check.elements(iterable, seen):
                    return False
            elif not check.value(p.node, seen):
                return False
    return True


class _StreamCheck:
    """A producer that is a stream (never None): a stream maker, a list of them, or a name whose
    producers are."""

    counter = False  # ``enumerate``'s counter is no stream

    def __init__(self, ctx) -> None:
        self.ctx = ctx

    def value(self, node, seen) -> bool:
        if isinstance(node, ast.Call):
            return _qual(self.ctx, node.func) in STREAM_MAKERS
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            return self.elements(node.value, seen)
        if isinstance(node, ast.Name):
            return node.id in _stream_names(self.ctx) or _scoped(self.ctx, [node], self, seen)
        return False

    def elements(self, node, seen) -> bool:
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.value(node.elt, seen)
        if isinstance(node, (ast.List, ast.Tuple)):
            return bool(node.elts) and all(self.value(e, seen) for e in node.elts)
        if isinstance(node, ast.Name) and node in parents(self.ctx):
            return _scoped(self.ctx, [node], _Elements(self), seen)
        return False


class _Elements:
    """A producer that is a collection whose elements pass ``inner``."""

    counter = False

    def __init__(self, inner) -> None:
        self.inner = inner

    def value(self, node, seen) -> bool:
        return self.inner.elements(node, seen)

    def elements(self, node, seen) -> bool:
        return False  # a list of lists: not followed


_INDEX_CALLS = frozenset(
    {"get_device", "current_device", "current_device_index", "_get_device_index", "int", "len"}
)


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


class _Index:
    """Int-valued expressions by the file's bindings (a name's every binding must be one)."""

    def __init__(self, ctx, line: int, params: set | None = None) -> None:
        self.b = _bindings(ctx)
        self.ctx, self.line = ctx, line
        self.seen: set = set()  # names, and ("local", name) for a local value being judged
        self.params = set() if params is None else params  # producers' recursion guard

    def scoped(self, node: ast.Name) -> bool:
        """Every producer of the plain name ``node`` in the scope that binds it is an index
        (``producers``: a nested function's parameter by its callers' arguments)."""
        names = [node] if node in parents(self.ctx) else _reads(self.ctx, node.id, self.line)
        return _scoped(self.ctx, names, _IndexCheck(self.ctx), self.params)

    def local(self, name: str):
        """The value a plain name holds at ``self.line``: its last assignment at the top level
        of the enclosing function, with no other binding of it in between; None if unknown."""
        fn = self.ctx.scope_at(self.line).node
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        last = None
        for stmt in fn.body:
            if stmt.lineno >= self.line:
                break
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == name
            ):
                last = stmt
        if last is None:
            return None
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                if last.end_lineno < node.lineno < self.line:
                    return None
        return last.value

    def expr(self, node) -> bool:
        if isinstance(node, ast.Constant):
            return node.value is None or (type(node.value) is int)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.expr(node.operand)
        if isinstance(node, ast.IfExp):
            return self.expr(node.body) and self.expr(node.orelse)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mod)):
            return self.expr(node.left) and self.expr(node.right)
        if isinstance(node, ast.Call):
            return _callee(node) in _INDEX_CALLS
        if isinstance(node, ast.Attribute) and node.attr == "index":
            return True
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            return self.elements(node.value)
        if isinstance(node, ast.Name) and (value := self.local(node.id)) is not None:
            return self._local_expr(node.id, value)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.name(_key(node)) or (isinstance(node, ast.Name) and self.scoped(node))
        return False

    def _local_expr(self, name: str, value) -> bool:
        """``value``, the last assignment of ``name`` before the line, is an index; an assignment
        that reads the name itself (``i = i + 1``) is judged once (it recursed without end)."""
        key = ("local", name)
        if key in self.seen:
            return False
        self.seen.add(key)
        try:
            return self.expr(value)
        finally:
            self.seen.discard(key)

    def name(self, key) -> bool:
        if key is None or key in self.seen:
            return False
        self.seen.add(key)
        try:
            anns = self.b.annotations.get(key, [])
            if anns and all(isinstance(a, ast.Name) and a.id == "int" for a in anns):
                return True
            loops = self.b.loops.get(key, [])
            values = self.b.values.get(key, [])
            if any(a is not None for a in anns) or not (loops or values):
                return False
            return all(self.iterable(i) for i in loops) and all(self.expr(v) for v in values)
        finally:
            self.seen.discard(key)

    def iterable(self, node) -> bool:
        return isinstance(node, ast.Call) and _callee(node) == "range" or self.elements(node)

    def elements(self, node) -> bool:
        """A list whose elements are all indices (a comprehension of them, or a name bound so)."""
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.expr(node.elt)
        if isinstance(node, (ast.List, ast.Tuple)):
            return bool(node.elts) and all(self.expr(e) for e in node.elts)
        if isinstance(node, ast.Name) and (value := self.local(node.id)) is not None:
            return self.elements(value)
        if isinstance(node, (ast.Name, ast.Attribute)):
            key = _key(node)
            if key is None or key in self.seen:
                return False
            values = self.b.values.get(key, [])
            if self.b.annotations.get(key):
                return self._scoped_elements(node)  # a parameter: its value is the caller's
            self.seen.add(key)
            try:
                if values and all(self.elements(v) for v in values):
                    return True
            finally:
                self.seen.discard(key)
            return self._scoped_elements(node)
        return False

    def _scoped_elements(self, node) -> bool:
        if not isinstance(node, ast.Name):
            return False
        names = [node] if node in parents(self.ctx) else _reads(self.ctx, node.id, self.line)
        return _scoped(self.ctx, names, _Elements(_IndexCheck(self.ctx)), self.params)


class _IndexCheck:
    """``_scoped``'s check for indices: a producer in the tree, judged at its own line."""

    counter = True  # ``enumerate``'s counter is an int

    def __init__(self, ctx) -> None:
        self.ctx = ctx

    def value(self, node, params) -> bool:
        return _Index(self.ctx, node.lineno, params).expr(node)

    def elements(self, node, params) -> bool:
        return _Index(self.ctx, node.lineno, params).elements(node)


def is_index(ctx, source: str, line: int) -> bool:
    """The expression ``source`` (at ``line``) is always an int device index (or None)."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return False
    return _Index(ctx, line).expr(node)


def calls_positional(ctx, target: str) -> bool:
    """Every call of ``target`` (a name, or ``self.x``) in the file passes at most one argument,
    positionally."""
    for node in ctx.nodes:
        if isinstance(node, ast.Call) and ast.unparse(node.func) == target:
            if (
                node.keywords
                or len(node.args) > 1
                or any(isinstance(a, ast.Starred) for a in node.args)
            ):
                return False
    return True


def _catches(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_key(t) in _CAUGHT for t in types)


def probed(ctx, line: int) -> bool:
    """``line`` is in the body of a ``try`` that catches what a missing device raises."""
    for node in ctx.nodes:
        if isinstance(node, ast.Try) and node.body:
            start, end = node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno
            if start <= line <= end and any(_catches(h) for h in node.handlers):
                return True
    return False
