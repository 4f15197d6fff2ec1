"""The ``ast`` visitor: resolves names through the file's imports and matches them, string
literals in the contexts the literal rules name, and branch candidates, against the plan.

Only statements whose line span holds a hit line (``hits.py``) are visited; handlers return the
children to visit next (None: all of them), so a resolved chain is not visited twice.
"""

from __future__ import annotations

import ast
import bisect
from typing import Any, Sequence

from audits.model import Rule
from audits.python.plan import Plan
from audits.python.segments import DEFS
from audits.python.strings import candidates, literal_text, text_of, value_matches
from audits.resolve import bindings, dotted_parts, qualify

# Child nodes that no handler looks at and that have no children worth a visit: contexts,
# operators and constants (literal rules read constants from their parent's handler).
_LEAVES = frozenset(
    [ast.Constant]
    + [
        c
        for base in (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
        for c in base.__subclasses__()
    ]
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` in the same order, less the ``_LEAVES``."""
    t = type(node)
    names = _FIELDS.get(t)
    if names is None:
        names = _FIELDS[t] = () if t in _LEAVES else tuple(f for f in t._fields if f != "ctx")
    out: list[ast.AST] = []
    for f in names:
        v = getattr(node, f, None)
        if isinstance(v, list):
            out.extend([c for c in v if isinstance(c, ast.AST) and type(c) not in _LEAVES])
        elif isinstance(v, ast.AST) and type(v) not in _LEAVES:
            out.append(v)
    return out


class Scan:
    def __init__(self, plan: Plan, lines: list[str], hits: list[int], package: str) -> None:
        self.p = plan
        self.lines = lines
        self.hits = hits
        self.package = package
        self.imports: dict[str, str] = {}
        self.out: list[tuple[Rule, ast.AST, str, str]] = []  # rule, node, matched name, kind
        self.spans: list[tuple[Rule, int, int, int, int, str]] = []  # explicit spans
        self.done_literals: set[int] = set()
        self.branch_cands: list[tuple[str, ast.AST, list[ast.AST], ast.AST]] = []

    # -- imports
    def add_import(self, node: ast.Import | ast.ImportFrom) -> None:
        for local, qual in bindings(node, self.package):
            if qual is not None:
                self.imports[local] = qual

    def resolve(self, parts: list[str]) -> str | None:
        return qualify(parts, self.imports.get)

    def match_name(self, full: str) -> tuple[Rule, str] | None:
        memo = self.p.matched
        if full in memo:
            return memo[full]
        hit = memo[full] = self._match_name(full)
        return hit

    def _match_name(self, full: str) -> tuple[Rule, str] | None:
        p = self.p
        parts = full.split(".")
        for k in range(len(parts), 0, -1):
            pre = ".".join(parts[:k])
            r = p.exact.get(pre)
            if r is not None:
                return r, pre
            if k > 1:
                r = p.wildcard.get(".".join(parts[: k - 1]))
                if r is not None:
                    return r, pre
        return None

    # -- traversal
    def in_hits(self, node: ast.AST) -> bool:
        h = self.hits
        decos = getattr(node, "decorator_list", None)
        i = bisect.bisect_left(h, decos[0].lineno if decos else node.lineno)
        return i < len(h) and h[i] <= node.end_lineno

    def run(self, roots: Sequence[ast.AST]) -> None:
        stack = list(reversed(roots))
        pop, push = stack.pop, stack.extend
        handlers = self.HANDLERS
        stmt, in_hits = ast.stmt, self.in_hits
        while stack:
            node = pop()
            if isinstance(node, stmt) and not in_hits(node):
                continue
            h = handlers.get(type(node))
            kids = h(self, node) if h else None
            push(reversed(_children(node)) if kids is None else kids)

    def emit(self, rule: Rule, node: ast.AST, matched: str = "", kind: str = "") -> None:
        self.out.append((rule, node, matched, kind or rule.kind))

    def h_import(self, node):
        self.add_import(node)
        return ()

    def h_chain(self, node):
        """Attribute / Name: resolve the maximal chain once, then descend to its base only."""
        p = self.p
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            return ()
        parts = dotted_parts(node)
        if parts is not None:
            full = self.resolve(parts)
            if full is not None:
                hit = self.match_name(full)
                if hit is not None:
                    self.emit(hit[0], node, hit[1], "reference")
                    return ()
            last = parts[-1]
            if not isinstance(node.ctx, ast.Store):
                r = p.identifiers.get(last)
                if r is None and p.prefixes:
                    r = next((rr for pre, rr in p.prefixes if last.startswith(pre)), None)
                if r is not None:
                    self.emit(r, node, last)
                    return ()
            if isinstance(node, ast.Attribute) and last in p.attributes:
                self.emit(p.attributes[last], node, last)
            return ()
        # an Attribute on a non-chain base (call, subscript, ...)
        if node.attr in p.attributes:
            self.emit(p.attributes[node.attr], node, node.attr)
        base = node.value
        while isinstance(base, ast.Attribute) and dotted_parts(base) is None:
            if base.attr in p.attributes:
                self.emit(p.attributes[base.attr], base, base.attr)
            base = base.value
        return (base,)

    def h_call(self, node: ast.Call):
        p = self.p
        func = node.func
        fname = None
        parts = dotted_parts(func)
        if parts is not None:
            fname = self.resolve(parts)
        hit = self.match_name(fname) if fname is not None else None
        if hit is not None:
            self.emit(hit[0], func, hit[1], "call")
        elif isinstance(func, ast.Attribute) and func.attr in p.methods:
            self.emit(p.methods[func.attr], node, func.attr, "call")
        if p.literals:
            if node.keywords and p.lit_keywords:
                for kw in node.keywords:
                    if kw.arg in p.lit_keywords:
                        self.literal_ctx(kw.value, lambda lr, a=kw.arg: a in lr.keywords)
            if node.args:
                if fname in p.lit_calls:
                    self.literal_ctx(node.args[0], lambda lr: fname in lr.calls)
                elif isinstance(func, ast.Attribute) and func.attr in p.lit_methods:
                    self.literal_ctx(node.args[0], lambda lr, a=func.attr: a in lr.methods)
        if hit is not None:  # the callee is reported; visit only the arguments
            return [*reversed(node.keywords), *reversed(node.args)]
        return None

    def literal_ctx(self, expr: ast.AST, ok) -> None:
        for c in candidates(expr):
            if id(c) in self.done_literals:
                continue
            lt = literal_text(c)
            if lt is None:
                continue
            for lr in self.p.literals:
                if ok(lr) and value_matches(lt[0], lt[1], lr.values):
                    self.done_literals.add(id(c))
                    self.emit(lr.rule, c, lt[0])
                    break

    def h_assign(self, node):
        if self.p.has_targets and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                txt = text_of(t)
                if txt:
                    self.literal_ctx(
                        node.value,
                        lambda lr, s=txt: (
                            lr.targets is not None and lr.targets.search(s) is not None
                        ),
                    )
        return None

    def h_def(self, node):
        if self.p.has_targets and not isinstance(node, ast.ClassDef):
            a = node.args
            pos = a.posonlyargs + a.args
            pairs = list(zip(pos[len(pos) - len(a.defaults) :], a.defaults))
            pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            for arg, default in pairs:
                self.literal_ctx(
                    default,
                    lambda lr, s=arg.arg: (
                        lr.targets is not None and lr.targets.search(s) is not None
                    ),
                )
        if "decorator" in self.p.branches and node.decorator_list:
            self.branch_cands.append(
                ("decorator", node, list(node.decorator_list), node.decorator_list[0])
            )
        return None

    def h_compare(self, node: ast.Compare):
        if not self.p.has_compare:
            return None
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)):
                self.compare_pair(left, op, right)
            left = right
        return None

    def compare_pair(self, left, op, right) -> None:
        seqs = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set)
        if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(right, seqs):
            lt = literal_text(left)  # `"cuda" in <expr>`: the substring rules come first
            for lr in self.p.literals:
                if (
                    lt
                    and lr.contains is not None
                    and value_matches(lt[0], lt[1], lr.values)
                    and lr.contains.search(text_of(right))
                ):
                    self.add_span(lr.rule, left, right, lt[0])
                    return
        for lr in self.p.literals:
            if lr.compare is not None:
                for lit_side, other in ((left, right), (right, left)):
                    if isinstance(other, seqs):
                        continue
                    for c in candidates(lit_side):
                        lt = literal_text(c)
                        if (
                            lt
                            and value_matches(lt[0], lt[1], lr.values)
                            and lr.compare.search(text_of(other))
                        ):
                            self.add_span(lr.rule, left, right, lt[0])
                            return

    def add_span(self, rule: Rule, a: ast.AST, b: ast.AST, matched: str) -> None:
        self.spans.append((rule, a.lineno, a.col_offset, b.end_lineno, b.end_col_offset, matched))

    def h_if(self, node: ast.If):
        br = self.p.branches
        if br:
            line = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else ""
            kind = "elif" if line[node.col_offset : node.col_offset + 4] == "elif" else "if"
            if kind in br:
                self.branch_cands.append((kind, node, [node.test], node))
        return None

    def h_ifexp(self, node):
        if "ifexp" in self.p.branches:
            self.branch_cands.append(("ifexp", node, [node.test], node))
        return None

    def h_assert(self, node):
        if "assert" in self.p.branches:
            self.branch_cands.append(("assert", node, [node.test], node))
        return None

    HANDLERS: dict[type, Any] = {}


Scan.HANDLERS = {
    ast.Import: Scan.h_import,
    ast.ImportFrom: Scan.h_import,
    ast.Attribute: Scan.h_chain,
    ast.Name: Scan.h_chain,
    ast.Call: Scan.h_call,
    ast.Assign: Scan.h_assign,
    ast.AnnAssign: Scan.h_assign,
    ast.FunctionDef: Scan.h_def,
    ast.AsyncFunctionDef: Scan.h_def,
    ast.ClassDef: Scan.h_def,
    ast.Compare: Scan.h_compare,
    ast.If: Scan.h_if,
    ast.IfExp: Scan.h_ifexp,
    ast.Assert: Scan.h_assert,
}


def module_imports(scan: Scan, roots: Sequence[ast.stmt]) -> None:
    """Record every module-level import, however deep in if/try/with/for/while/match blocks
    (``if TYPE_CHECKING:``, ``try: ... except ImportError:``); class and def bodies have their
    own scope and are left out."""
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            scan.add_import(n)
        elif not isinstance(n, DEFS):
            kids = [k for f in _BLOCKS for k in getattr(n, f, None) or () if isinstance(k, ast.AST)]
            stack.extend(reversed(kids))


_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")  # in source order
