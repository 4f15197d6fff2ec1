"""The device-flag analysis of attribute units: ``self.cuda = False`` and every use of it."""

from __future__ import annotations

import ast

from audits.python.findings import subsystem
from patches.generate.codemods.families.device_flag_base import _TreeBase
from patches.generate.codemods.families.device_flag_units import (
    NEW,
    AttrUnit,
    _cuda_code,
    _stmt_of,
)
from patches.generate.codemods.tree_index import dotted


class _AttrChecks(_TreeBase):
    """The attribute units of one tree (``_Tree``)."""

    # -- attributes -------------------------------------------------------------------------
    def _attrs(self, rel: str) -> None:
        """Classes setting ``self.<switch> = <truth value>``."""
        ctx = self.index.context(rel)
        if ctx is None:
            return
        for n in ctx.nodes:
            if not isinstance(n, (ast.Assign, ast.AnnAssign)):
                continue
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and t.attr in self.names
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                ):
                    cls = self._enclosing_class(rel, ctx, t)
                    if cls is not None:
                        self.out.attrs.setdefault((cls, t.attr), AttrUnit(cls, t.attr))

    def _namespace(self, ctx, line: int, recv: ast.AST) -> bool:
        """``recv`` is a name bound to ``<parser>.parse_args(...)`` in its scope."""
        if not isinstance(recv, ast.Name):
            return False
        b = ctx.binding(line, recv.id)
        if b is None:
            return False
        scope = b[0].node
        for n in ast.walk(scope):
            if (
                isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == recv.id for t in n.targets)
                and isinstance(n.value, ast.Call)
                and isinstance(n.value.func, ast.Attribute)
                and n.value.func.attr in ("parse_args", "parse_known_args")
            ):
                return True
        return False

    def _module_ref(self, ctx, line: int, recv: ast.AST) -> bool:
        """``recv`` names a module (``torch``, ``torch.version``, ``config`` imported from a
        package) or something outside the tree: its ``.cuda`` is not our object's switch."""
        d = dotted(recv)
        if not d:
            return False
        head = d.split(".")[0]
        hq = None
        for scope in ctx.chain(line):
            if head in scope.imports and "import" in scope.bound.get(head, ()):
                hq = scope.imports[head]
                break
            if head in scope.bound:
                return False  # a local, a parameter: may hold our object
        if hq is None:
            return False
        path = hq.replace(".", "/")
        if self.index.prefix and path.startswith(self.index.prefix):
            path = path[len(self.index.prefix) :]
        root = self.index.root
        if (root / path).is_dir() or (root / f"{path}.py").is_file():
            return True
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        if parent and (root / parent).is_dir() and not (root / f"{parent}.py").is_file():
            return True  # imported from a package: a submodule
        return not (root / path.split("/")[0]).exists()  # outside the tree

    def _check_attr(self, unit: AttrUnit) -> None:
        family = set(self.index.mro(unit.cls)) | self.index.subclasses(unit.cls)
        short = unit.cls.rsplit(".", 1)[-1]
        if not short.startswith("_") and not any(
            p.startswith("_") for p in unit.cls.split(".")[:-1]
        ):
            unit.why = f"`{unit.cls}.{unit.attr}` is a public attribute"
            return
        for rel in self.index.holding(unit.attr.encode()):
            ctx = self.index.context(rel)
            if ctx is None:
                continue
            for n in ctx.nodes:
                why = self._attr_use(unit, family, rel, ctx, n)
                if why:
                    unit.why = why
                    return
        files = {rel for rel, _ in unit.sites}
        subs = sorted({subsystem(f) for f in files})
        if len(subs) > 1:
            unit.why = f"its sites span subsystems {', '.join(subs)} (one patch each)"

    def _attr_use(self, unit: AttrUnit, family: set, rel: str, ctx, n: ast.AST) -> str:
        """Why the node ``n`` of ``rel`` leaves the attribute unit ("" where it does not; a
        read or write on ``self`` in the class is recorded as a site)."""
        parents = self.parents(rel)
        if isinstance(n, ast.Constant) and n.value == unit.attr:
            call = parents.get(n)
            if (
                isinstance(call, ast.Call)
                and ast.unparse(call.func) in ("getattr", "setattr", "hasattr")
                and call.args
                and not self._module_ref(ctx, n.lineno, call.args[0])
            ):
                return f"`{unit.attr}` is looked up by name in {rel}:{n.lineno}"
            return ""
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in (unit.attr, NEW):
            cls = self._enclosing_class(rel, ctx, n)
            return f"`{cls}` defines a method `{n.name}`" if cls in family else ""
        if not isinstance(n, ast.Attribute) or n.attr not in (unit.attr, NEW):
            return ""
        parent = parents.get(n)
        if isinstance(parent, ast.Call) and parent.func is n:
            return ""  # x.cuda(): a method
        recv = n.value
        if isinstance(recv, ast.Name) and recv.id == "self":
            return self._self_use(unit, family, rel, ctx, n)
        if n.attr == NEW or self._module_ref(ctx, n.lineno, recv):
            return ""  # a module's attribute (torch.version.cuda, config.cuda)
        if self._namespace(ctx, n.lineno, recv):
            return ""  # a script's parsed options (args.cuda): the script families'
        d = dotted(recv)
        q = ctx.qualify(n.lineno, d) if d else None
        if q and "." not in q:
            q = f"{ctx.module_name}.{q}"
        if q in self.index.classes() and q not in family:
            return ""  # another class's own member (TypedStorage.cuda)
        return f"`{ast.unparse(n)}` in {rel}:{n.lineno} may read `{unit.cls}.{unit.attr}`"

    def _self_use(self, unit: AttrUnit, family: set, rel: str, ctx, n: ast.Attribute) -> str:
        cls = self._enclosing_class(rel, ctx, n)
        if cls not in family:
            return ""  # another class's own attribute
        if n.attr == NEW:
            return f"`{cls}` already has `self.{NEW}` ({rel}:{n.lineno})"
        stmt = _stmt_of(self.parents(rel), n)
        if isinstance(n.ctx, ast.Store) and not (
            isinstance(stmt, ast.Assign) and stmt.targets == [n]
        ):
            return f"`self.{unit.attr}` is set by {rel}:{n.lineno}"
        used = _cuda_code(ctx, stmt)
        if used:
            return f"`self.{unit.attr}` selects CUDA device code ({used}): it stays a CUDA switch"
        unit.sites.append((rel, n.lineno))
        if isinstance(n.ctx, ast.Store):
            self._stores[(rel, n.lineno, unit.attr)] = stmt.value
        return ""
