"""What a function returns, for the wrapper pass: the values of its own ``return`` statements,
a returned local name followed to the one value assigned to it.

``available = torch.cuda.is_available(); return available`` (also inside a ``with``, or after
``available = False`` and in a ``try``) returns the query. A name assigned two computed values
(``ok = torch.cuda.is_available()`` and later ``ok = torch.xpu.is_available()``), bound any other
way (a loop target, ``with ... as``, ``+=``, a tuple target, an import) or a parameter is not
followed: the function may return something else. A name the function never binds is a global
and stays as it is (it may be another wrapper).
"""

from __future__ import annotations

import ast
from typing import Iterable, Iterator

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# What a statement list holds (bodies, except handlers, match cases).
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)
_UNKNOWN = object()  # bound, but not by a plain assignment of one value


def returned_values(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The values ``fn`` returns (see the module docstring), in the order of ``_returns``."""
    out: list[ast.AST] = []
    params = _params(fn)
    for v in _returns(fn):
        if isinstance(v, ast.Name) and v.id not in params:
            bound = _assigned(fn, v.id)
            if bound is None:
                out.append(v)  # not bound here: a global
            elif bound is not _UNKNOWN:
                out.append(bound)
        else:
            out.append(v)
    return out


def _returns(fn: ast.AST) -> Iterator[ast.AST]:
    """The return values of ``fn`` itself (not of nested functions or classes). A return is a
    statement: only the statement lists of compound statements are searched."""
    for n in _statements(fn):
        if isinstance(n, ast.Return) and n.value is not None:
            yield n.value


def _statements(fn: ast.AST) -> Iterator[ast.AST]:
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (*_DEFS, ast.ClassDef, ast.Return)):
            for field in n._fields:  # in field order: the returns come in the same order
                value = getattr(n, field, None)
                if isinstance(value, list) and value and isinstance(value[0], _BLOCKS):
                    stack.extend(value)


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = fn.args
    return {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}


def _assigned(fn: ast.AST, name: str):
    """The one computed value assigned to ``name`` in ``fn`` (constants aside), ``_UNKNOWN``
    when it is bound otherwise or more than once, None when ``fn`` does not bind it."""
    values: list[ast.AST] = []
    bound = False
    for n in _statements(fn):
        if isinstance(n, _DEFS + (ast.ClassDef,)) and n.name == name:
            return _UNKNOWN
        for target, value in _bindings(n):
            if _binds(target, name):
                bound = True
                if value is None or not isinstance(target, ast.Name):
                    return _UNKNOWN
                if not isinstance(value, ast.Constant):
                    values.append(value)
    if not bound:
        return None
    return values[0] if len(values) == 1 else _UNKNOWN


def _bindings(n: ast.AST) -> Iterable[tuple[ast.AST, ast.AST | None]]:
    """(target, the value assigned or None when not a plain value) of a statement."""
    if isinstance(n, ast.Assign):
        return [(t, n.value) for t in n.targets]
    if isinstance(n, ast.AnnAssign):
        return [(n.target, n.value)] if n.value is not None else []
    if isinstance(n, ast.AugAssign):
        return [(n.target, None)]
    if isinstance(n, (ast.For, ast.AsyncFor)):
        return [(n.target, None)]
    if isinstance(n, (ast.With, ast.AsyncWith)):
        return [(i.optional_vars, None) for i in n.items if i.optional_vars is not None]
    if isinstance(n, ast.ExceptHandler) and n.name:
        return [(ast.Name(id=n.name), None)]
    if isinstance(n, (ast.Import, ast.ImportFrom)):
        return [(ast.Name(id=(a.asname or a.name).split(".")[0]), None) for a in n.names]
    return []


def _binds(target: ast.AST, name: str) -> bool:
    return any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(target))
