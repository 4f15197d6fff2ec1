"""A loop's filter: ``for x in xs: if not <check>: continue`` then the rest of the body files
``x`` into a collection (``by_device.setdefault(dev, []).append(...)``, ``keep.append(x)``,
``seen[k] = x``) that code after the loop reads. That code runs only on what passed the check,
so the check guards it too (unsloth-zoo's ``auto_swap_indices`` keeps the layers on CUDA, then
asks ``torch.cuda.mem_get_info`` of each device it kept, round 39)."""

from __future__ import annotations

import ast

_FILLS = {"append", "extend", "add", "update", "setdefault", "insert", "appendleft"}
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _filled(stmts) -> set[str]:
    """Names of collections the statements fill: a method that adds, an item assigned, ``+=``."""
    out: set[str] = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                if n.func.attr in _FILLS and isinstance(n.func.value, ast.Name):
                    out.add(n.func.value.id)
            elif isinstance(n, (ast.Assign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                        out.add(t.value.id)
                    elif isinstance(n, ast.AugAssign) and isinstance(t, ast.Name):
                        out.add(t.id)
    return out


def filtered_after(index, stmt: ast.If) -> list[ast.stmt]:
    """The statements after ``stmt``'s loop that read what the rest of the loop body files,
    where ``stmt`` is an ``if`` of the loop's body whose body ends in ``continue``."""
    loop = index.parents.get(stmt)
    if not (isinstance(loop, _LOOPS) and stmt in loop.body and stmt.body):
        return []
    if not isinstance(stmt.body[-1], ast.Continue):
        return []
    filled = _filled(index.after(stmt))
    if not filled:
        return []
    return [
        s
        for s in index.after(loop)
        if any(isinstance(n, ast.Name) and n.id in filled for n in ast.walk(s))
    ]
