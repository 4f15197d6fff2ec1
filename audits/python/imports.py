"""What a file's imports bind, by scope: module-level imports (visible everywhere) and imports
inside a function or class (visible in that definition only).

``from torch.cuda import synchronize`` inside a function makes its ``synchronize()`` a CUDA
call whose line holds no CUDA token: the prefilter must take that name as a hit in the file
(``local_aliases``, read from the import lines before the file is parsed), and the visitor must
resolve it there and nowhere else (``local_scopes``; a ``synchronize`` of another function is
not this one).
"""

from __future__ import annotations

import ast
from typing import Iterator, Sequence

from audits.python.hits import cuda_aliases
from audits.python.segments import DEFS
from audits.resolve import bindings

_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")  # in source order
_CONTINUED = 20  # lines an import statement may span (parenthesised names)

# local name -> [(first line, last line, qualified name)] of the definitions importing it
Scoped = dict[str, list[tuple[int, int, str]]]


def module_statements(roots: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The module-level statements of ``roots`` in source order, however deep in
    if/try/with/for/while/match blocks (``if TYPE_CHECKING:``, ``try: ... except ImportError:``);
    class and def bodies have their own scope: the definition is yielded, not its body."""
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        if isinstance(n, ast.stmt):
            yield n
        if not isinstance(n, DEFS):
            kids = [k for f in _BLOCKS for k in getattr(n, f, None) or () if isinstance(k, ast.AST)]
            stack.extend(reversed(kids))


def module_imports(scan, roots: Sequence[ast.stmt]) -> None:
    """Record every module-level import (``module_statements``)."""
    for n in module_statements(roots):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            scan.add_import(n)


def local_aliases(lines: list[str], hits: Sequence[int], package: str) -> list[str]:
    """Names that an indented import on a hit line binds to a CUDA thing without spelling it
    (``from torch.cuda import synchronize``), read from the text alone: the file is not parsed
    yet, and the hit lines decide which of it will be."""
    found: dict[str, str] = {}
    for line in hits:
        text = lines[line - 1]
        head = text.lstrip()
        if head == text or not head.startswith(("from ", "import ")):
            continue
        node = _statement(lines, line)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((k, v) for k, v in bindings(node, package) if v is not None)
    return cuda_aliases(found)


def _statement(lines: list[str], line: int) -> ast.stmt | None:
    """The one statement starting on ``line``, dedented; None when it does not parse within
    ``_CONTINUED`` lines."""
    text, nxt = lines[line - 1].lstrip(), line
    while True:
        try:
            body = ast.parse(text).body
        except SyntaxError:
            if nxt >= len(lines) or nxt - line >= _CONTINUED:
                return None
            text, nxt = text + "\n" + lines[nxt], nxt + 1
            continue
        return body[0] if len(body) == 1 else None


def local_scopes(scan, roots: Sequence[ast.stmt]) -> None:
    """Record on ``scan`` the imports inside definitions: ``scan.nested`` (their node ids: not
    module-level bindings) and ``scan.scoped`` (each name with the span of the definition that
    binds it). Walks statement blocks only: an import is a statement."""
    scoped: Scoped = {}
    stack: list[tuple[ast.AST, tuple[int, int] | None]] = [(r, None) for r in reversed(roots)]
    while stack:
        node, span = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if span is not None:
                scan.nested.add(id(node))
                for local, qual in bindings(node, scan.package):
                    if qual is not None:
                        scoped.setdefault(local, []).append((*span, qual))
            continue
        if isinstance(node, DEFS):
            span = (node.lineno, node.end_lineno)
        kids = [k for f in _BLOCKS for k in getattr(node, f, None) or () if isinstance(k, ast.AST)]
        stack.extend((k, span) for k in reversed(kids))
    scan.scoped = scoped


def lookup(scan, line: int):
    """The import lookup at ``line``: the innermost definition's own import of a name, else the
    module's."""

    def get(name: str) -> str | None:
        best = None
        for first, last, qual in scan.scoped.get(name, ()):
            if first <= line <= last and (best is None or first >= best[0]):
                best = (first, qual)
        return best[1] if best is not None else scan.imports.get(name)

    return get
