"""The visitor's child lists: ``ast.iter_child_nodes`` less the leaves no handler looks at."""

from __future__ import annotations

import ast

# Child nodes that no handler looks at and that have no children worth a visit: contexts,
# operators and, unless a rule reads string constants anywhere, constants (literal rules read
# constants from their parent's handler).
_OPS = [
    c
    for base in (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
    for c in base.__subclasses__()
]


def _children_fn(leaves: frozenset):
    fields: dict[type, tuple[str, ...]] = {}

    def children(node: ast.AST) -> list[ast.AST]:
        """``list(ast.iter_child_nodes(node))`` in the same order, less the leaves."""
        t = type(node)
        names = fields.get(t)
        if names is None:
            names = fields[t] = () if t in leaves else tuple(f for f in t._fields if f != "ctx")
        out: list[ast.AST] = []
        for f in names:
            v = getattr(node, f, None)
            if isinstance(v, list):
                out.extend([c for c in v if isinstance(c, ast.AST) and type(c) not in leaves])
            elif isinstance(v, ast.AST) and type(v) not in leaves:
                out.append(v)
        return out

    return children


children = _children_fn(frozenset([ast.Constant, *_OPS]))
children_with_constants = _children_fn(frozenset(_OPS))
