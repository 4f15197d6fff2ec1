"""What a file binds to each plain name: the value spans of its assignments, or ``None`` for a
binding whose value the file does not show (a loop or ``with`` target, an import, a tuple
target), or ``PARAMETER`` for a parameter. The gate judges a name by these values, not by its spelling: ``has_cuda =
any(t.device.type == "cuda" ...)`` is as CUDA as its value once that value is rewritten."""

from __future__ import annotations

import ast
import functools

from patches.generate.intent.data import other_backend_only
from patches.generate.intent.nodes import Span, span_of

Bindings = dict[str, list[Span | None]]

# a parameter's binding: its value is the caller's, and its spelling is the author's word (an
# empty span: nothing in it stays CUDA)
PARAMETER: Span = ((0, 0), (0, 0))


def binding_targets(node: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """(target, value or None) of one binding statement or construct."""
    if isinstance(node, ast.Assign):
        return [(t, node.value if isinstance(t, ast.Name) else None) for t in node.targets]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
        return [(node.target, node.value)]
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [(node.target, None)]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [(node.optional_vars, None)]
    return []


def bindings(nodes) -> Bindings:
    """Every name the nodes (a file's, ``FileContext.nodes``) bind, with what."""
    out: Bindings = {}
    for node in nodes:
        for target, value in binding_targets(node):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    known = value is not None and name is target
                    out.setdefault(name.id, []).append(span_of(value) if known else None)
        if isinstance(node, ast.arg):
            out.setdefault(node.arg, []).append(PARAMETER)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out.setdefault((a.asname or a.name).split(".")[0], []).append(None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(node.name, []).append(None)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                out.setdefault(n, []).append(None)
    return out


def other_backend_bound(ctx, scope, name: str) -> bool:
    """``scope`` (a ``FileContext`` scope) also binds ``name`` to another backend's device type
    (``"mps"``, alone or as an arm of a pick over several backends) or to the accelerator's
    (``torch.accelerator.current_accelerator()``, such a pick's neutral form): the name was never
    CUDA's alone, so a test of it against ``"cuda"`` tells CUDA from the others."""
    return (id(scope), name) in _other_backend_names(ctx)


# the accelerator's device (type): the neutral pick's forms, ``torch.accelerator``'s and our layer's
_ACCELERATOR = {"current_accelerator", "accelerator_api.device_type"}


def _names_other_backend(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in _ACCELERATOR or ast.unparse(node) in _ACCELERATOR
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.isidentifier()
        and other_backend_only(node.value)
    )


@functools.lru_cache(maxsize=8)
def _other_backend_names(ctx) -> frozenset[tuple[int, str]]:
    """(id of the scope, name) of each plain name an assignment binds to a value that names
    another backend's device type or the accelerator's."""
    out = set()
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and any(
            _names_other_backend(c) for c in ast.walk(node.value)
        ):
            scope = ctx.scope_at(node.lineno)
            out.update((id(scope), t.id) for t in node.targets if isinstance(t, ast.Name))
    return frozenset(out)
