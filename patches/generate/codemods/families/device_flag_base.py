"""The device-flag analysis' base: one tree's parents, HN510 sites and call-target resolution."""

from __future__ import annotations

import ast

from patches.generate.codemods.families.device_flag_units import Analysis
from patches.generate.codemods.tree_index import TreeIndex, dotted


class _TreeBase:
    """The analysis of one tree for one set of switch names: what every check reads."""

    def __init__(self, index: TreeIndex, names: tuple[str, ...]) -> None:
        self.index, self.names = index, names
        self.out = Analysis()
        self._nodes: dict[tuple[str, int, str], ast.Call] = {}
        self._stores: dict[tuple[str, int, str], ast.AST] = {}  # attribute writes' values

    def parents(self, rel: str) -> dict:
        ctx = self.index.context(rel)
        return ctx.parents if ctx is not None else {}

    def has_finding(self, rel: str) -> bool:
        """The file holds an HN510 site (a parameter, keyword or attribute set named like a
        switch): the run visits it (``audits/python/flags.py``)."""
        ctx = self.index.context(rel)
        if ctx is None:
            return False
        for n in ctx.nodes:
            if isinstance(n, ast.arg) and n.arg in self.names:
                return True
            if isinstance(n, ast.keyword) and n.arg in self.names:
                return True
            if (
                isinstance(n, ast.Attribute)
                and n.attr in self.names
                and isinstance(n.ctx, ast.Store)
            ):
                return True
        return False

    def _targets(self, rel: str, ctx, node: ast.AST, name: str) -> tuple[str, set]:
        """Where a reference ``...name`` at ``node`` goes: ("ours", defs of the tree),
        ("other", set()) for a function outside the tree, ("unknown", set())."""
        defs = {(d.cls or d.module, d.path, d.node.lineno): d for d in self.index.named(name)}
        if isinstance(node, ast.Name):
            q = ctx.qualify(node.lineno, name)
            if q is None:
                return "other", set()
            if q == name:
                q = f"{ctx.module_name}.{name}"
            hit = {d for d in defs.values() if not d.cls and f"{d.module}.{d.name}" == q}
            return ("ours", hit) if hit else ("other", set())
        assert isinstance(node, ast.Attribute)
        return self._attr_targets(rel, ctx, node, defs)

    def _attr_targets(self, rel: str, ctx, node: ast.Attribute, defs: dict) -> tuple[str, set]:
        """``_targets`` of ``<receiver>.name``: through ``super()``, ``self``/``cls``, a class
        or module of the tree, or an unknown object."""
        recv = node.value
        if isinstance(recv, ast.Call) and ast.unparse(recv.func) == "super":
            cls = self._enclosing_class(rel, ctx, node)
            owners = set(self.index.mro(cls)[1:]) if cls else None
        elif isinstance(recv, ast.Name) and recv.id in ("self", "cls"):
            cls = self._enclosing_class(rel, ctx, node)
            owners = set(self.index.mro(cls)) | self.index.subclasses(cls) if cls else None
        else:
            return self._named_targets(ctx, node, defs)
        if owners is None:
            return "unknown", set()
        hit = {d for d in defs.values() if d.cls in owners}
        return ("ours", hit) if hit else ("other", set())

    def _named_targets(self, ctx, node: ast.Attribute, defs: dict) -> tuple[str, set]:
        d = dotted(node.value)
        q = ctx.qualify(node.lineno, d) if d else None
        if q is None or not d:
            return "unknown", set()
        if q == d and "." not in d:
            if d in ctx.module.bound and "other" in ctx.module.bound[d]:
                q = f"{ctx.module_name}.{d}"  # a class of this module
            else:
                return "unknown", set()  # a local variable
        if q in self.index.classes():
            owners = set(self.index.mro(q)) | self.index.subclasses(q)
            hit = {x for x in defs.values() if x.cls in owners}
            return ("ours", hit) if hit else ("other", set())
        hit = {x for x in defs.values() if not x.cls and x.module == q}
        if hit:
            return "ours", hit
        tree_modules = {x.module for x in defs.values()}
        if q in tree_modules or any(q.startswith(m + ".") for m in tree_modules):
            return "unknown", set()
        return "other", set()

    def _enclosing_class(self, rel: str, ctx, node) -> str | None:
        parents = self.parents(rel)
        chain = []
        p = parents.get(node)
        while p is not None:
            if isinstance(p, ast.ClassDef):
                chain.append(p.name)
            p = parents.get(p)
        if not chain:
            return None
        return ".".join([ctx.module_name, *reversed(chain)])
