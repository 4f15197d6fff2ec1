"""Import resolution, defined once: a file's module and package, what an import statement binds,
and the qualified name a dotted reference stands for. Pure functions over ``ast`` nodes and paths;
nothing is imported.

Used by the Python scanner (``audits.python_scan``), the codemod's per-file context and re-export
check (``patches.generate.codemods``) and the test selection (``patches.validate.selection``), so
that a name the audit reports is the name the codemod rewrites.

``prefix`` is the scanned root's package path (``audits.walk.package_prefix``: ``torch/`` when the
root is itself a package), so ``cuda/__init__.py`` scanned from ``torch/`` is ``torch.cuda``.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator, Sequence

__all__ = [
    "absolute_module",
    "bindings",
    "dotted_parts",
    "module_name",
    "package_name",
    "qualify",
]


def _parts(relpath: str, prefix: str = "") -> list[str]:
    path = prefix + relpath
    for suffix in (".py", ".pyi"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    return [p for p in path.split("/") if p]


def module_name(relpath: str, prefix: str = "") -> str:
    """``torch/testing/_internal/common_utils.py`` -> ``torch.testing._internal.common_utils``;
    a package's ``__init__.py`` is the package itself (``torch/cuda/__init__.py`` -> ``torch.cuda``)."""
    parts = _parts(relpath, prefix)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_name(relpath: str, prefix: str = "") -> str:
    """The package a file's relative imports resolve against: its directory as a dotted name
    (for ``__init__.py`` that is the package the file defines). ``""`` at the top of the root."""
    return ".".join(_parts(relpath, prefix)[:-1])


def absolute_module(level: int, module: str | None, package: str) -> str | None:
    """The module ``from <level dots><module> import ...`` names when executed in ``package``.

    ``level`` 0 is an absolute import (``module``). A relative import climbing above the top of
    ``package`` (Python's "attempted relative import beyond top-level package") is None, as is
    one whose package is unknown (``""``)."""
    if not level:
        return module or ""
    base = package.split(".") if package else []
    if len(base) < level:
        return None
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def bindings(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[tuple[str, str | None]]:
    """(local name, qualified name) for each name the import binds; the qualified name is None
    for a relative import that cannot be resolved (the local name is bound all the same).

    ``import a.b`` binds ``a`` -> ``a``; ``import a.b as c``: ``c`` -> ``a.b``; ``from m import x
    as y``: ``y`` -> ``m.x``; ``from . import cuda`` in package ``torch``: ``cuda`` -> ``torch.cuda``.
    ``from m import *`` binds nothing we can name."""
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                yield a.asname, a.name
            else:
                head = a.name.split(".")[0]
                yield head, head
        return
    mod = absolute_module(node.level, node.module, package)
    for a in node.names:
        if a.name == "*":
            continue
        local = a.asname or a.name
        if mod is None:
            yield local, None
        else:
            yield local, f"{mod}.{a.name}" if mod else a.name


def dotted_parts(node: ast.AST) -> list[str] | None:
    """``['a', 'b', 'c']`` for a pure Name/Attribute chain ``a.b.c``, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


def qualify(parts: Sequence[str], lookup: Callable[[str], str | None]) -> str | None:
    """The qualified name of the dotted reference ``parts`` given ``lookup`` (local name ->
    qualified name of its import, or None when not imported). ``torch`` without a visible import
    is still torch (code often relies on a re-export or a star import); anything else unbound is
    None."""
    head = lookup(parts[0])
    if head is None:
        if parts[0] != "torch":
            return None
        head = "torch"
    return ".".join([head, *parts[1:]]) if len(parts) > 1 else head
