"""What the codemod needs to know about a whole file, from one ``ast`` parse (milliseconds, where
libcst's ScopeProvider/QualifiedNameProvider cost seconds per 100 KB): scopes and the names they
bind, import bindings (for qualified names), and the statement that holds a given line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

from audits.resolve import bindings, module_name, package_name, qualify
from patches.generate.codemods.definite import (
    bound_on_every_path,
    cpu_assigned,
    cpu_default,
    indexed_default,
)
from patches.generate.intent.nodes import COMPS as _COMPS
from patches.generate.intent.nodes import param_defaults

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass
class Scope:
    node: ast.AST
    start: int
    end: int
    is_class: bool
    parent: "Scope | None"
    bound: dict[str, set[str]] = field(default_factory=dict)  # name -> {"import", "other"}
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    globals: set[str] = field(default_factory=set)
    first: dict[str, int] = field(default_factory=dict)  # name -> line first bound (0: a parameter)
    defs: set[str] = field(default_factory=set)  # names a ``def``/``class`` here binds

    def bind(self, name: str, how: str, line: int = 0) -> None:
        self.bound.setdefault(name, set()).add(how)
        self.first[name] = min(self.first.get(name, line), line)


def stmt_start(node: ast.stmt) -> int:
    decos = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decos]) if decos else node.lineno


class FileContext:
    """Scopes, imports and statements of one parsed file (``ast`` line numbers, 1-based)."""

    function_bodies = True  # False: a function's scope holds its parameters, not its body

    def __init__(
        self, source: str, tree: ast.Module, path: str = "", package_prefix: str = ""
    ) -> None:
        self.source = source
        self.tree = tree
        self.path = path
        # the dotted names relative imports resolve against (the scan's ``package_prefix``)
        self.module_name = module_name(path, package_prefix)
        self.package = package_name(path, package_prefix)
        self.module = Scope(tree, 1, max(source.count("\n") + 1, 1), False, None)
        self.scopes: list[Scope] = [self.module]
        self.stmts: list[ast.stmt] = []
        # (first, last) lines of statements a family rewrites whole (its ``prepare`` adds them):
        # each is one region, not a header and a body (``regions.regions``)
        self.blocks: set[tuple[int, int]] = set()
        # the scanned tree (``tree_index.TreeIndex``) for units spanning files, or None
        self.tree_index = None
        self._collect(tree, self.module)

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the tree in ``ast.walk`` order, walked once: some thirty passes read
        the whole file (families, the intent index), and walking is most of their time."""
        return list(ast.walk(self.tree))

    @cached_property
    def parents(self) -> dict[ast.AST, ast.AST]:
        """Each node's parent (``nodes``' order: a node listed twice, as the shared ``ast.Load``,
        keeps its last)."""
        return {c: p for p in self.nodes for c in ast.iter_child_nodes(p)}

    # -- building --------------------------------------------------------------------------
    def _collect(self, node: ast.AST, scope: Scope) -> None:
        for child in ast.iter_child_nodes(node):
            self._visit(child, scope)

    def _visit(self, node: ast.AST, scope: Scope) -> None:
        if isinstance(node, ast.stmt):
            self.stmts.append(node)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node, scope)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            scope.globals.update(node.names)
        elif isinstance(node, _SCOPES):
            self._scope(node, scope)
        elif isinstance(node, _COMPS):
            return  # comprehension variables live in their own scope; no statements inside
        else:
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                scope.bind(node.id, "other", node.lineno)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                scope.bind(node.name, "other", node.lineno)
            self._collect(node, scope)

    def _scope(self, node: ast.AST, scope: Scope) -> None:
        # Decorators, bases and defaults are evaluated in the enclosing scope.
        for d in getattr(node, "decorator_list", []):
            self._visit(d, scope)
        inner = Scope(node, node.lineno, node.end_lineno, isinstance(node, ast.ClassDef), scope)
        self.scopes.append(inner)
        if not isinstance(node, ast.Lambda):
            scope.defs.add(node.name)
        if isinstance(node, ast.ClassDef):
            scope.bind(node.name, "other", node.lineno)
            for b in node.bases + [k.value for k in node.keywords]:
                self._visit(b, scope)
        else:
            if not isinstance(node, ast.Lambda):
                scope.bind(node.name, "other", node.lineno)
            args = node.args
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    inner.bind(a.arg, "other")
            for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
                self._visit(d, scope)
            if not self.function_bodies:
                return
        for b in node.body if isinstance(node.body, list) else [node.body]:
            self._visit(b, inner)

    def _import(self, node: ast.Import | ast.ImportFrom, scope: Scope) -> None:
        # audits.resolve, as the scan does: `from . import cuda` in package torch is torch.cuda
        for local, qual in bindings(node, self.package):
            scope.bind(local, "import")
            if qual is not None:
                scope.imports[local] = qual

    # -- queries ---------------------------------------------------------------------------
    def scope_at(self, line: int) -> Scope:
        """The innermost scope whose span holds ``line``."""
        best = self.module
        for s in self.scopes:
            if s.start <= line <= s.end and (s.end - s.start) <= (best.end - best.start):
                best = s
        return best

    def chain(self, line: int):
        """Visible scopes from ``line`` outwards (class scopes only when innermost)."""
        s = self.scope_at(line)
        first = True
        while s is not None:
            if first or not s.is_class:
                yield s
            first = False
            s = s.parent

    def binding(self, line: int, name: str) -> tuple[Scope, set[str]] | None:
        for s in self.chain(line):
            if name in s.globals and s is not self.module:
                hows = self.module.bound.get(name)
                return (self.module, hows) if hows else None
            if name in s.bound:
                return s, s.bound[name]
        return None

    def bound_before(self, line: int, name: str) -> bool:
        """``name`` is a parameter, or assigned (not imported, not a ``def``) before ``line``, in
        the scope that resolves it: ``device = torch.device("cuda")`` does not make its own line
        a use of it (nor a class body's ``@property def device`` its methods' decorators).
        Not a parameter that defaults to ``None`` and is assigned nowhere before ``line`` (MONAI's
        ``device: str | None = None``, resolved into another name): it may hold no value."""
        b = self.binding(line, name)
        if b is None or b[1] != {"other"} or b[0].first.get(name, line) >= line:
            return False
        if name in b[0].defs:  # a class body's ``def device(self)``: a function, no value
            return False
        return not self._unusable(b[0], name, line)

    def in_scope(self, line: int, name: str) -> bool:
        """``name`` resolves at ``line``, and not only to a parameter that defaults to ``None``
        and is assigned nowhere before ``line``, nor to a name of ``line``'s own scope first bound
        there or later (mmseg's ``device = cost.device`` below the autocast that would read it:
        an ``UnboundLocalError``)."""
        b = self.binding(line, name)
        if b is None or self._unusable(b[0], name, line):
            return False
        return b[0] is not self.scope_at(line) or b[0].first.get(name, 0) < line

    def pinned(self, line: int, name: str) -> bool:
        """``name`` at ``line`` is its function's parameter, still its default, and the default
        names one device by index (``device="cuda:0"``): not the current device."""
        b = self.binding(line, name)
        fn = b[0].node if b is not None else None
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        d = param_defaults(fn).get(name)
        return indexed_default(d) and not _assigned_before(fn, name, line)

    def _unusable(self, scope: Scope, name: str, line: int) -> bool:
        """``name`` resolves in ``scope`` but may hold no device at ``line``: a parameter that
        defaults to ``None`` or to the CPU and is assigned nowhere before it, or a local of the
        line's own function bound only on some paths to it (``definite``)."""
        fn = scope.node
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        # a ``device`` that holds the CPU (by default, or set so on a path) is where something
        # goes, not CUDA's stand-in; a ``device_type`` parameter is the caller's type (upstream
        # builds ``f"rank:0/{device_type}:0"`` from one that defaults to "cpu")
        place = name == "device"
        if place and cpu_assigned(fn, name, line):
            return True
        defaults = param_defaults(fn)
        if name in defaults or name in _params(fn):
            d = defaults.get(name)
            unset = isinstance(d, ast.Constant) and d.value is None or place and cpu_default(d)
            return unset and not _assigned_before(fn, name, line)
        return scope is self.scope_at(line) and not bound_on_every_path(fn, name, line)

    def defined_locally(self, line: int, name: str) -> bool:
        b = self.binding(line, name)
        return b is not None and "other" in b[1]

    def qualify(self, line: int, dotted: str) -> str | None:
        """``tc.device_count`` -> ``torch.cuda.device_count`` through the visible imports;
        a bare name bound only by an assignment qualifies as itself; unbound -> None."""
        return qualify(dotted.split("."), lambda head: self._lookup(line, head))

    def _lookup(self, line: int, head: str) -> str | None:
        for s in self.chain(line):
            if head in s.imports and (head not in s.bound or "import" in s.bound[head]):
                return s.imports[head]
            if head in s.bound:
                return head  # bound here by an assignment (or an unresolvable import): itself
        return None


class ClassContext(FileContext):
    """A ``FileContext`` that skips function bodies: the module's and classes' bindings and
    imports, all that a class line's names resolve through (a function's locals are never in its
    chain). ``TreeIndex.classes`` reads every class of a tree with it; whole-tree contexts cost
    most of that pass."""

    function_bodies = False


def _params(fn) -> set[str]:
    a = fn.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
    return {p.arg for p in every if p is not None}


def _assigned_before(fn, name: str, line: int) -> bool:
    """``name`` is stored somewhere in ``fn``'s own body before ``line``."""
    todo = list(fn.body) if isinstance(fn.body, list) else []
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
            if n.lineno < line:
                return True
        todo += ast.iter_child_nodes(n)
    return False
