"""Which mutants can run in one pytest process by swapping a function's code.

The mutation check (patches.validate.mutation) reuses one pytest process per hunk and device for
all of the hunk's mutants (``hn_mutant_plugin``): torch, the device and the test collection are
paid once, and each mutant is put in place by giving the function that holds it the code compiled
from the mutant's file. That is the same program as importing the mutant's file only when

- every line where the mutant differs from the file lies inside the body of one module-level
  function or one method of a module-level class (not its ``def`` line, decorators or defaults,
  which are evaluated once, at import), in the file and in the mutant alike, and
- none of the hunk's lines ran outside a test on that device (at import or collection, where a
  swap made after collection comes too late): coverage.py's empty context says so.

Anything else runs the old way, a fresh pytest process per mutant with the file written.
"""

from __future__ import annotations

import ast

from patches.validate.oracle import _enclosing


def changed_span(a: list[str], b: list[str]) -> tuple[int, int, int, int]:
    """(first, last) changed line of ``a`` and of ``b`` (1-based; last < first: nothing there,
    e.g. lines only inserted), by the longest common prefix and suffix."""
    n = min(len(a), len(b))
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    s = 0
    while s < n - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    return p + 1, len(a) - s, p + 1, len(b) - s


def body_owner(tree: ast.Module, first: int, last: int) -> str | None:
    """The qualname of the module-level function (or method of a module-level class) whose body
    holds lines ``first``..``last``; None when they are not all inside one such body."""
    names: list[str] = []
    for node in _enclosing(tree, first):
        names.append(node.name)
        if isinstance(node, ast.ClassDef):
            if len(names) > 1:
                return None  # a nested class
            continue
        if node.body[0].lineno <= first and last <= node.end_lineno:
            return ".".join(names)
        return None
    return None


def swap_target(original: str, mutated: str) -> str | None:
    """The function whose code swap turns ``original`` into ``mutated``, or None."""
    a, b = original.splitlines(), mutated.splitlines()
    a_lo, a_hi, b_lo, b_hi = changed_span(a, b)
    try:
        trees = ast.parse(original), ast.parse(mutated)
    except (SyntaxError, ValueError):
        return None
    owners = set()
    for tree, lo, hi in ((trees[0], a_lo, a_hi), (trees[1], b_lo, b_hi)):
        if hi < lo:  # nothing on this side: the line before the change must be in the body
            lo = hi = lo - 1
        owners.add(body_owner(tree, lo, hi) if lo >= 1 else None)
    if len(owners) != 1:
        return None
    return owners.pop()
