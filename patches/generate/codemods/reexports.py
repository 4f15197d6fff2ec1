"""Which files of the scanned tree import a name from a given module (re-export safety).

An import a rewrite leaves unused is normally removed (PyTorch's lint flags unused imports), but
another module may import that name *from* this file (``from patches.common_cuda import TEST_CUDA``).
A cheap byte search for the name picks candidate files; their ``from X import`` statements
(relative ones resolved against the file's package) decide.
"""

from __future__ import annotations

import ast
from pathlib import Path

from audits.resolve import absolute_module, module_name, package_name
from audits.walk import Entry
from patches.generate.audit_io import python_entries


def python_files(root: Path) -> list[Entry]:
    """The ``*.py`` files of ``audit_io.python_entries`` (the scanner's walk of the whole tree)."""
    return [e for e in python_entries(root) if e.relpath.endswith(".py")]


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every ``python_files`` file: path relative to ``root`` -> its bytes (one that cannot be
    read, or went away meanwhile, is skipped)."""
    out = {}
    for e in python_files(root):
        try:
            out[e.relpath] = Path(e.abspath).read_bytes()
        except OSError:
            continue
    return out


class Importers:
    """``importers(path)(name)`` -> a file of ``root`` importing ``name`` from ``path``, or "".
    ``package_prefix``: the scan's, so module names read as the scan reads them."""

    def __init__(self, root: Path, package_prefix: str = "", index=None) -> None:
        self.root = root
        self.prefix = package_prefix
        self.index = index  # the run's ``TreeIndex`` of ``root``: its bytes and parses, shared
        self._bytes: dict[str, bytes] | None = None
        self._trees: dict[str, ast.Module | None] = {}

    def _files(self) -> dict[str, bytes]:
        if self._bytes is None:
            self._bytes = tree_bytes(self.root) if self.index is None else self.index.files()
        return self._bytes

    def _tree(self, rel: str) -> ast.Module | None:
        if rel not in self._trees:
            tree = self.index.tree(rel) if self.index is not None else None
            if tree is None:  # not UTF-8 text the index parses: the bytes, as Python reads them
                try:
                    tree = ast.parse(self._files()[rel])
                except (SyntaxError, ValueError):
                    tree = None
            self._trees[rel] = tree
        return self._trees[rel]

    def of(self, path: str):
        module = module_name(path, self.prefix)

        def importer(name: str) -> str:
            key = name.encode()
            for rel, data in self._files().items():
                if rel == path or key not in data:
                    continue
                tree = self._tree(rel)
                for node in ast.walk(tree) if tree else ():
                    if (
                        isinstance(node, ast.ImportFrom)
                        and absolute_module(node.level, node.module, package_name(rel, self.prefix))
                        == module
                        and any(a.name == name for a in node.names)
                    ):
                        return rel
            return ""

        return importer
