"""Whether a function's local is bound on every path to a line, and whether a parameter holds
the CPU: a ``device`` a rewrite may use must hold a device there, and not the CPU by default.

colossalai's llama attention binds ``device`` only under ``if position_ids is None:``; writing
``device=device`` further down raises ``UnboundLocalError`` whenever the caller passes
``position_ids``. Its MoE checkpoint's ``device`` parameter is where the state goes (the CPU by
default); ``v.cuda()`` there is not ``v.to(device)``.
"""

from __future__ import annotations

import ast
import re

from patches.generate.intent.nodes import header

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _stores(node: ast.AST, name: str) -> bool:
    """``node`` (not the scopes inside it) stores ``name``."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
            return True
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in n.names):
                return True
        todo += [c for c in ast.iter_child_nodes(n) if not isinstance(c, _SCOPES)]
    return False


def _within(node: ast.AST, line: int) -> bool:
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def _block_of(stmt: ast.stmt, line: int) -> list[ast.stmt] | None:
    """The block of compound ``stmt`` that holds ``line`` (None: its header does)."""
    blocks = [getattr(stmt, f, None) or [] for f in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(stmt, "handlers", [])]
    blocks += [c.body for c in getattr(stmt, "cases", [])]
    return next((b for b in blocks if any(_within(s, line) for s in b)), None)


def _always(stmt: ast.stmt, name: str) -> bool:
    """Running ``stmt`` to its end binds ``name`` on every path."""
    if any(_stores(h, name) for h in header(stmt)):
        return True
    if isinstance(stmt, ast.If):
        return _binds(stmt.body, name, None) and _binds(stmt.orelse, name, None)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return _binds(stmt.body, name, None)
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        if _binds(stmt.finalbody, name, None):
            return True
        paths = [stmt.body + stmt.orelse, *(h.body for h in stmt.handlers)]
        return all(_binds(p, name, None) for p in paths)
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.Match)):
        return False  # the body may not run
    if isinstance(stmt, _SCOPES):
        return getattr(stmt, "name", None) == name
    return _stores(stmt, name)


def _binds(stmts: list[ast.stmt], name: str, line: int | None) -> bool:
    """``stmts`` bind ``name`` on every path before ``line`` (None: to their end)."""
    for s in stmts:
        if line is not None and _within(s, line):
            inner = _block_of(s, line)
            if inner is None:  # the line is in the statement's own header or a simple statement
                return False
            loop = isinstance(s, (ast.For, ast.AsyncFor)) and inner is s.body
            if any(_stores(h, name) for h in header(s)) or loop and _stores(s.target, name):
                return True
            return _binds(inner, name, line)
        if line is not None and s.lineno > line:
            return False
        if _always(s, name):
            return True
    return False


def bound_on_every_path(fn: ast.AST, name: str, line: int) -> bool:
    """``name``, a local of function ``fn`` (not a parameter), is bound on every path from the
    function's start to ``line``."""
    return _binds(getattr(fn, "body", []), name, line)


_INDEXED = re.compile(r"[a-z_]+:\d+$")


def cpu_default(d: ast.expr | None) -> bool:
    """A parameter's default ``d`` is the CPU (``"cpu"``, ``torch.device("cpu")``)."""
    if isinstance(d, ast.Call) and len(d.args) == 1 and not d.keywords:
        d = d.args[0] if ast.unparse(d.func).endswith("device") else d
    return isinstance(d, ast.Constant) and d.value == "cpu"


def indexed_default(d: ast.expr | None) -> bool:
    """A parameter's default ``d`` names one device by its index (``"cuda:0"``,
    ``torch.device("cuda", 0)``): that device, not the current one."""
    if isinstance(d, ast.Call) and ast.unparse(d.func).endswith("device") and not d.keywords:
        if len(d.args) == 2 and isinstance(d.args[1], ast.Constant):
            return isinstance(d.args[1].value, int)
        d = d.args[0] if len(d.args) == 1 else d
    return (
        isinstance(d, ast.Constant) and isinstance(d.value, str) and bool(_INDEXED.match(d.value))
    )


def cpu_assigned(fn: ast.AST, name: str, line: int) -> bool:
    """``name = "cpu"`` (or ``torch.device("cpu")``) somewhere in ``fn``'s own body before
    ``line``: on that path the name holds the CPU."""
    todo = list(getattr(fn, "body", []))
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Assign) and n.lineno < line and cpu_default(n.value):
            if any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
                return True
        todo += [c for c in ast.iter_child_nodes(n) if not isinstance(c, _SCOPES)]
    return False
