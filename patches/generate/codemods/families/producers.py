"""What a plain name may hold where it is read: every producer of it in the scope that binds it.

``producers(ctx, name)`` (``name`` an ``ast.Name`` of ``ctx.tree``) -> the values the name can
hold there, or None where the file cannot tell. A producer is a ``Value`` (the name is bound to
that expression) or an ``Element`` (to an element of an iterable, through the target's
destructuring: ``for i, (m, d) in enumerate(zip(ms, devices))`` makes ``d`` an element of
``devices``). Flow is ignored: every binding of the scope counts, wherever it stands, so what
holds for every producer holds at every read.

A parameter's producers are its callers' arguments, only where the file shows every caller: a
function nested in another (a closure: nothing outside the enclosing function can reach it),
undecorated, not a method, whose every reference is a call (``f(...)``) or the target of a
thread (``threading.Thread(target=f, args=(...), kwargs={...})``), without ``*``/``**``
arguments; its default counts where a call omits it. Any other use (the function handed on as a
value, ``global``/``nonlocal``, an augmented assignment, a ``with ... as``, an import) is None.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from patches.generate.codemods.context import param_defaults
from patches.generate.intent.nodes import COMPS as _COMPS

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_THREAD = frozenset({"threading.Thread"})


@dataclass(frozen=True)
class Value:
    node: ast.AST  # the expression bound to the name


@dataclass(frozen=True)
class Element:
    iterable: ast.AST  # the name holds an element of this
    path: tuple[int, ...]  # then this position of that element's destructuring


Producer = Value | Element


@functools.lru_cache(maxsize=8)
def parents(ctx) -> dict[ast.AST, ast.AST]:
    return {c: n for n in ctx.nodes for c in ast.iter_child_nodes(n)}


def _own(scope: ast.AST):
    """The nodes of ``scope``'s own namespace (a function's body, or the module): nested
    functions, lambdas and classes are yielded but not entered (their decorators and defaults
    are), comprehensions only through their first iterable (evaluated outside them)."""
    stack = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*_FUNCS, ast.ClassDef)):
            stack += getattr(node, "decorator_list", [])
            if isinstance(node, ast.ClassDef):
                stack += node.bases + [k.value for k in node.keywords]
            else:
                stack += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        elif isinstance(node, _COMPS):
            stack.append(node.generators[0].iter)
        else:
            stack += ast.iter_child_nodes(node)


def _params(fn) -> list[str]:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    return names + [x.arg for x in (a.vararg, a.kwarg) if x is not None]


def _target_path(target: ast.AST, name: str) -> tuple[int, ...] | None:
    """Where ``name`` sits in a (nested) tuple target: () for the target itself."""
    if isinstance(target, ast.Name):
        return () if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        for i, e in enumerate(target.elts):
            if isinstance(e, ast.Starred):
                return None
            sub = _target_path(e, name)
            if sub is not None:
                return (i, *sub)
    return None


class _Scope:
    """The bindings of one name in one function or module namespace."""

    def __init__(self, ctx, scope: ast.AST, name: str) -> None:
        self.ctx, self.scope, self.name = ctx, scope, name

    def binds(self) -> bool:
        if isinstance(self.scope, _FUNCS) and self.name in _params(self.scope):
            return True
        return any(self._binding(n) for n in _own(self.scope))

    def _binding(self, node) -> bool:
        if isinstance(node, ast.Name):
            return node.id == self.name and not isinstance(node.ctx, ast.Load)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return node.name == self.name
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return self.name in node.names
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return any((a.asname or a.name.split(".")[0]) == self.name for a in node.names)
        if isinstance(node, ast.ExceptHandler):
            return node.name == self.name
        if isinstance(node, ast.arg):  # a lambda's parameter is its own; never yielded
            return False
        return False

    def producers(self, seen: set) -> list[Producer] | None:
        out: list[Producer] = []
        par = parents(self.ctx)
        if any(  # a walrus in a comprehension binds in this scope too
            isinstance(n, ast.NamedExpr) and getattr(n.target, "id", None) == self.name
            for n in ast.walk(self.scope)
        ):
            return None
        for node in _own(self.scope):
            if not self._binding(node):
                continue
            if not isinstance(node, ast.Name) or isinstance(node.ctx, ast.Del):
                return None
            up = par.get(node)
            top, path = node, ()
            while isinstance(up, (ast.Tuple, ast.List)):  # destructuring: where in the target
                path = (up.elts.index(top), *path)
                top, up = up, par.get(up)
            if isinstance(up, ast.Assign) and top in up.targets:
                if path:
                    v = _unpack(up.value, path)
                    if v is None:
                        return None
                    out.append(Value(v))
                else:
                    out.append(Value(up.value))
            elif isinstance(up, ast.AnnAssign) and up.target is top and up.value is not None:
                out.append(Value(up.value))
            elif isinstance(up, (ast.For, ast.AsyncFor)) and up.target is top:
                out.append(Element(up.iter, path))
            else:
                return None  # augmented, a with ... as, a walrus, an annotation alone
        if isinstance(self.scope, _FUNCS) and self.name in _params(self.scope):
            callers = _callers(self.ctx, self.scope, self.name, seen)
            if callers is None:
                return None
            out += callers
        return out


def _unpack(value: ast.AST, path: tuple[int, ...]) -> ast.AST | None:
    for i in path:
        if not isinstance(value, (ast.Tuple, ast.List)) or any(
            isinstance(e, ast.Starred) for e in value.elts
        ):
            return None
        if i >= len(value.elts):
            return None
        value = value.elts[i]
    return value


def _qualified(ctx, node) -> str | None:
    from audits.resolve import dotted_parts

    parts = dotted_parts(node)
    return ctx.qualify(node.lineno, ".".join(parts)) if parts else None


def _call_args(ctx, ref: ast.Name, par) -> tuple[list, dict] | None:
    """(positional, keyword) arguments a reference of a function passes it: ``f(...)``, or
    ``threading.Thread(target=f, args=(...), kwargs={...})``; None for any other use."""
    up = par.get(ref)
    if isinstance(up, ast.Call) and up.func is ref:
        if any(isinstance(a, ast.Starred) for a in up.args) or any(
            k.arg is None for k in up.keywords
        ):
            return None
        return list(up.args), {k.arg: k.value for k in up.keywords}
    if not (isinstance(up, ast.keyword) and up.arg == "target"):
        return None
    thread = par.get(up)
    if not (isinstance(thread, ast.Call) and _qualified(ctx, thread.func) in _THREAD):
        return None
    if thread.args or any(k.arg is None for k in thread.keywords):
        return None
    kw = {k.arg: k.value for k in thread.keywords}
    args, kwargs = kw.get("args", ast.Tuple([])), kw.get("kwargs", ast.Dict([], []))
    if not isinstance(args, (ast.Tuple, ast.List)) or any(
        isinstance(e, ast.Starred) for e in args.elts
    ):
        return None
    if not isinstance(kwargs, ast.Dict) or not all(
        isinstance(k, ast.Constant) and isinstance(k.value, str) for k in kwargs.keys
    ):
        return None
    return list(args.elts), {k.value: v for k, v in zip(kwargs.keys, kwargs.values)}


def _references(outer, fn) -> list[ast.Name] | None:
    """The reads of ``fn``'s name in ``outer`` (the function defining it), or None where
    ``outer`` binds that name again anywhere (a parameter, a def, an import, a store)."""
    refs = []
    for node in ast.walk(outer):
        if node is fn:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == fn.name:
                return None
        elif isinstance(node, ast.arg) and node.arg == fn.name:
            return None
        elif isinstance(node, (ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom)):
            if fn.name in [getattr(a, "asname", None) or getattr(a, "name", a) for a in node.names]:
                return None
        elif isinstance(node, ast.Name) and node.id == fn.name:
            if not isinstance(node.ctx, ast.Load):
                return None
            refs.append(node)
    return refs


def _argument(fn, param: str, args: list, kwargs: dict) -> ast.AST | None:
    """What a call ``fn(*args, **kwargs)`` binds ``param`` to (its default where it is not
    passed), or None."""
    a = fn.args
    positional = [x.arg for x in a.posonlyargs + a.args]
    if param in positional and positional.index(param) < len(args):
        return args[positional.index(param)]
    if param in kwargs and param not in [x.arg for x in a.posonlyargs]:
        return kwargs[param]
    return param_defaults(fn).get(param)


def _callers(ctx, fn, param: str, seen: set) -> list[Producer] | None:
    """The values every caller passes ``fn``'s parameter ``param`` (its default where a call
    omits it), or None where the file does not show every caller."""
    key = (id(fn), param)
    if key in seen or isinstance(fn, ast.Lambda) or fn.decorator_list:
        return None
    par = parents(ctx)
    outer = par.get(fn)
    while outer is not None and not isinstance(outer, (*_FUNCS, ast.ClassDef, ast.Module)):
        outer = par.get(outer)
    if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None  # a module's function or a method: callers elsewhere
    if param in {x.arg for x in (fn.args.vararg, fn.args.kwarg) if x is not None}:
        return None
    refs = _references(outer, fn)
    if not refs:
        return None
    seen.add(key)  # kept for the whole question: a parameter met again is not followed again
    out: list[Producer] = []
    for ref in refs:
        got = _call_args(ctx, ref, par)
        value = _argument(fn, param, *got) if got is not None else None
        if value is None:
            return None  # handed on as a value, or a call that cannot bind it
        out.append(Value(value))
    return out


def producers(ctx, name: ast.Name, seen: set | None = None) -> list[Producer] | None:
    """Every value ``name`` (a read of ``ctx.tree``) may hold, or None where the file cannot tell
    (see the module docstring). ``seen``: parameters already being resolved (recursion)."""
    seen = set() if seen is None else seen
    par = parents(ctx)
    child, node = name, par.get(name)
    while node is not None:
        if isinstance(node, _COMPS) and child is not node.generators[0].iter:
            for gen in node.generators:
                path = _target_path(gen.target, name.id)
                if path is not None:
                    return [Element(gen.iter, path)]
        elif isinstance(node, ast.ClassDef):
            return None  # read in a class body (a method's read stops at its function)
        elif isinstance(node, (*_FUNCS, ast.Module)):
            scope = _Scope(ctx, node, name.id)
            if scope.binds():
                return scope.producers(seen)
        child, node = node, par.get(node)
    return None


def element_of(iterable: ast.AST, path: tuple[int, ...]) -> tuple[ast.AST, tuple[int, ...]] | None:
    """The iterable whose elements (at the rest of ``path``) an element of ``iterable`` at
    ``path`` is, through ``enumerate(x)`` and ``zip(a, b, ...)``: (iterable, rest), or None (the
    counter of ``enumerate``: an int; returned as ``(None, ())``)."""
    while path and isinstance(iterable, ast.Call) and not iterable.keywords:
        fn = getattr(iterable.func, "id", None)
        args = iterable.args
        if any(isinstance(a, ast.Starred) for a in args):
            return None
        if fn == "enumerate" and len(args) == 1:
            if path[0] == 0:
                return (None, ())  # the counter
            if path[0] != 1:
                return None
            iterable, path = args[0], path[1:]
        elif fn == "zip" and path[0] < len(args):
            iterable, path = args[path[0]], path[1:]
        else:
            return None
    return iterable, path
