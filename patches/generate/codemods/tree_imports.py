"""Which files of the scanned tree a file imports (``TreeIndex``'s files, by module name), for
units that span files: the project code a test module reaches (``intent/kinds/reached.py``).

``imported_files(index, rel)``: the tree files ``rel`` imports anywhere in it (a test's own
function-level imports too), then, one step further, what those files import at their top level
(not under ``if TYPE_CHECKING:``, not inside functions). A name taken from a package
(``from pkg import f``) is followed through the package's ``__init__`` to the module that binds
it, at no cost in depth; the package's other imports are not followed. The root package itself
(``import torch``, ``import axolotl``) is no step: it imports everything."""

from __future__ import annotations

import ast

from audits.resolve import absolute_module, module_name, package_name

_HOPS = 3  # re-exports followed through packages' ``__init__`` for one name


def imported_files(index, rel: str, depth: int = 2) -> list[str]:
    """The tree files ``rel`` reaches by import (``depth``: import steps), sorted."""
    key = ("imported-files", rel, depth)
    if key not in index.memo:
        seen, frontier = {rel}, [rel]
        for step in range(depth):
            found = []
            for r in frontier:
                for f in _direct(index, r, top_only=step > 0 or r != rel):
                    if f not in seen:
                        seen.add(f)
                        found.append(f)
            frontier = found
        index.memo[key] = sorted(f for f in seen if f != rel)
    return index.memo[key]


def _modules(index) -> dict[str, str]:
    """Module name -> tree file (a package by its ``__init__.py``)."""
    if "module-files" not in index.memo:
        index.memo["module-files"] = {
            module_name(r, index.prefix): r for r in index.files() if r.endswith(".py")
        }
    return index.memo["module-files"]


def _direct(index, rel: str, top_only: bool) -> set[str]:
    """The tree files ``rel``'s imports name (``top_only``: its top-level imports alone)."""
    tree = index.tree(rel)
    if tree is None:
        return set()
    out: set[str] = set()
    for node in _imports(tree, top_only):
        if isinstance(node, ast.Import):
            for a in node.names:
                out |= _module(index, a.name)
        elif isinstance(node, ast.ImportFrom):
            base = absolute_module(node.level, node.module, package_name(rel, index.prefix))
            if not base:
                continue
            for a in node.names:
                out |= _from(index, base, a.name, _HOPS)
    return out


def _module(index, name: str) -> set[str]:
    found = _modules(index).get(name)
    return {found} if found and "." in name else set()


def _from(index, base: str, name: str, hops: int) -> set[str]:
    """The file that ``from base import name`` reaches: the submodule ``base.name``, else the
    module ``base`` (through a package's ``__init__``, to where it binds ``name``)."""
    files = _modules(index)
    if f"{base}.{name}" in files:
        return {files[f"{base}.{name}"]}
    where = files.get(base)
    if where is None:
        return set()
    if not where.endswith("__init__.py"):
        return {where} if "." in base else set()
    tree = index.tree(where)
    if tree is None or hops == 0 or name == "*":
        return set()
    for node in _imports(tree, top_only=True):
        if isinstance(node, ast.ImportFrom) and any(
            (a.asname or a.name) == name for a in node.names
        ):
            inner = absolute_module(node.level, node.module, package_name(where, index.prefix))
            real = next(a.name for a in node.names if (a.asname or a.name) == name)
            return _from(index, inner, real, hops - 1) if inner else set()
    return {where} if "." in base else set()


def _imports(tree: ast.Module, top_only: bool):
    """The import statements of ``tree``: all of them, or (``top_only``) those that run when the
    module is imported (not in a function, not under ``if TYPE_CHECKING:``)."""
    if not top_only:
        yield from (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))
        return
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            stack += node.body + node.orelse
        elif isinstance(node, ast.Try):
            stack += node.body + node.orelse + node.finalbody
            for h in node.handlers:
                stack += h.body
        elif isinstance(node, ast.With):
            stack += node.body
