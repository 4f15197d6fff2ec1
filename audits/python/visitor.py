"""The ``ast`` visitor: resolves names through the file's imports and matches them, string
literals in the contexts the literal rules name, and branch candidates, against the plan.

Only statements whose line span holds a hit line (``hits.py``) are visited; handlers return the
children to visit next (None: all of them), so a resolved chain is not visited twice.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Any, Sequence

from audits.model import Rule
from audits.python import flags, strings
from audits.python.children import children, children_with_constants
from audits.python.device_lists import closed_device_list
from audits.python.device_types import device_type_compares
from audits.python.imports import Scoped, lookup
from audits.python.plan import Plan
from audits.python.strings import candidates, format_head, literal_text, text_of, value_matches
from audits.resolve import absolute_module, bindings, dotted_parts, qualify
from audits.vocabulary import OTHER_VENDORS

# Calls whose string arguments are text for people (never a device string in use): output,
# logging, warnings, exceptions, skips; and keyword arguments that carry such text.
_MESSAGE_CALLS = frozenset(
    "print debug info warning warn error exception critical fatal log echo write skipTest "
    "skip fail xfail skipIf skipUnless add_note".split()
)
_MESSAGE_SUFFIXES = ("Error", "Exception", "Warning", "Exit")
# Names of text for people: assigned to, or compared against, a string is not a device string.
_MESSAGE_NAME = re.compile(
    r"(?i)(?:^|[._(\[])(?:msg|message|text|err|error|exc|exception|reason|help|doc|log|label|"
    r"title|desc|description|warn|warning|name)s?(?:$|[._)\]])"
)
_MESSAGE_KEYWORDS = frozenset(
    "help msg message reason description doc epilog usage err_msg error_msg warning".split()
)


class Scan:
    def __init__(self, plan: Plan, lines: list[str], hits: list[int], package: str) -> None:
        self.p = plan
        self.lines = lines
        self.hits = hits
        self.package = package
        self.imports: dict[str, str] = {}  # module-level bindings
        self.nested: set[int] = set()  # imports inside a definition (``imports.local_scopes``)
        self.scoped: Scoped = {}
        self.out: list[tuple[Rule, ast.AST, str, str]] = []  # rule, node, matched name, kind
        self.spans: list[tuple[Rule, int, int, int, int, str]] = []  # explicit spans
        self.done_literals: set[int] = set()
        self.muted: set[int] = set()  # string nodes in messages (the `anywhere` rules skip them)
        self.paths: set[int] = set()  # string nodes handed to text/path operations
        self.seen_imports: set[int] = set()
        self.branch_cands: list[tuple[str, ast.AST, list[ast.AST], ast.AST]] = []
        self.children = children_with_constants if plan.anywhere else children
        self.cuda_only = any(
            ir.components is not None and any(ir.components.search(c) for c in package.split("."))
            for ir in plan.imports
        )

    # -- imports
    def add_import(self, node: ast.Import | ast.ImportFrom) -> None:
        for local, qual in bindings(node, self.package):
            if qual is not None and id(node) not in self.nested:
                self.imports[local] = qual
        if self.p.imports and id(node) not in self.seen_imports:
            self.seen_imports.add(id(node))
            self.import_finding(node)

    def import_finding(self, node: ast.Import | ast.ImportFrom) -> None:
        """Once per import statement that binds a CUDA-specific module or a name from one."""
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
            named: list[str] = []
        else:
            mod = absolute_module(node.level, node.module, self.package)
            if not mod:
                return
            mods = [mod]
            named = [f"{mod}.{a.name}" for a in node.names if a.name != "*"]
        for ir in self.p.imports:
            for m in mods + named:
                parts = m.split(".")
                if any(".".join(parts[:k]) in ir.modules for k in range(1, len(parts) + 1)) or (
                    m in mods
                    and ir.components is not None
                    and any(ir.components.search(c) for c in parts)
                ):
                    self.emit(ir.rule, node, m, "import", note=f"binds {m}")
                    return

    def resolve(self, parts: list[str], node: ast.AST | None = None) -> str | None:
        """``parts``' qualified name where ``node`` stands (a definition's own imports)."""
        if node is not None and self.scoped:
            return qualify(parts, lookup(self, node.lineno))
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
        stmt, in_hits, children = ast.stmt, self.in_hits, self.children
        while stack:
            node = pop()
            if isinstance(node, stmt) and not in_hits(node):
                continue
            h = handlers.get(type(node))
            kids = h(self, node) if h else None
            push(reversed(children(node)) if kids is None else kids)

    def emit(
        self, rule: Rule, node: ast.AST, matched: str = "", kind: str = "", note: str = ""
    ) -> None:
        self.out.append((rule, node, matched, kind or rule.kind, note))

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
            full = self.resolve(parts, node)
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
            if isinstance(node, ast.Attribute):
                r = self.attribute_rule(last)
                if r is not None:
                    self.emit(r, node, last)
            return ()
        # an Attribute on a non-chain base (call, subscript, ...)
        r = self.attribute_rule(node.attr)
        if r is not None:
            self.emit(r, node, node.attr)
        base = node.value
        while isinstance(base, ast.Attribute) and dotted_parts(base) is None:
            r = self.attribute_rule(base.attr)
            if r is not None:
                self.emit(r, base, base.attr)
            base = base.value
        return (base,)

    def attribute_rule(self, attr: str) -> Rule | None:
        p = self.p
        r = p.attributes.get(attr)
        if r is None and p.attr_prefixes:
            r = next((rr for pre, rr in p.attr_prefixes if attr.startswith(pre)), None)
        return r

    def h_call(self, node: ast.Call):
        p = self.p
        func = node.func
        fname = None
        parts = dotted_parts(func)
        if parts is not None:
            fname = self.resolve(parts, node)
        hit = self.match_name(fname) if fname is not None else None
        if hit is not None:
            self.emit(hit[0], func, hit[1], "call")
        elif isinstance(func, ast.Attribute) and func.attr in p.methods:
            self.emit(p.methods[func.attr], node, func.attr, "call")
        if p.literals:
            self.call_literals(node, parts, fname)
        if p.anywhere or p.device_lists:
            self.mute_messages(node, parts[-1] if parts else getattr(func, "attr", ""))
            if p.anywhere and format_head(node) is not None:
                self.anywhere(node)
        if hit is not None:  # the callee is reported; visit only the arguments
            return [*reversed(node.keywords), *reversed(node.args)]
        return None

    def call_literals(self, node: ast.Call, parts, fname: str | None) -> None:
        """Device strings in a call's literal contexts: keywords, first arguments, any argument."""
        p, func = self.p, node.func
        if node.keywords and p.lit_keywords:
            for kw in node.keywords:
                if kw.arg in p.lit_keywords:
                    self.literal_ctx(kw.value, lambda lr, a=kw.arg: a in lr.keywords)
        if node.args:
            if fname in p.lit_calls:
                self.literal_ctx(node.args[0], lambda lr: fname in lr.calls)
            elif isinstance(func, ast.Attribute) and func.attr in p.lit_methods:
                self.literal_ctx(node.args[0], lambda lr, a=func.attr: a in lr.methods)
        if p.lit_anyargs:
            last = parts[-1] if parts else getattr(func, "attr", None)
            if last in p.lit_anyargs:
                for a in [*node.args, *(kw.value for kw in node.keywords)]:
                    self.literal_ctx(a, lambda lr: last in lr.anyargs)

    # -- strings anywhere (the fallback after every specific context)
    def mute_messages(self, node: ast.Call, name: str) -> None:
        if name in _MESSAGE_CALLS or name.endswith(_MESSAGE_SUFFIXES):
            msgs = [*node.args, *(kw.value for kw in node.keywords)]
            if name in ("skipIf", "skipUnless"):
                msgs = msgs[1:]  # the condition is code
        else:
            msgs = [kw.value for kw in node.keywords if kw.arg in _MESSAGE_KEYWORDS]
        for m in msgs:
            self.mute(m)
        if name in strings.TEXT_CALLS:  # a path or a text there, not a remote device
            self.paths.update(id(n) for a in node.args for n in ast.walk(a))

    def mute(self, expr: ast.AST) -> None:
        for n in ast.walk(expr):
            if isinstance(
                n, (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call, ast.List, ast.Tuple, ast.Set)
            ):
                self.muted.add(id(n))

    def anywhere(self, node: ast.AST) -> None:
        """A device string in any other value position (``anywhere`` literal rules)."""
        if id(node) in self.done_literals or id(node) in self.muted:
            return
        lt = literal_text(node)
        for lr in self.p.anywhere if lt is not None else ():
            if value_matches(lt[0], lt[1], lr.values):
                self.mark(node)
                self.emit(lr.rule, node, lt[0])
                return
        found = strings.remote_rule(node, self.p.anywhere) if id(node) not in self.paths else None
        found = found or strings.code_rule(node, self.p.anywhere)
        if found is not None:  # "rank:0/cuda:0", "worker1/cuda", 'torch.device("cuda")'
            self.mark(node)
            self.emit(found[0].rule, node, found[1])

    def mark(self, node: ast.AST) -> None:
        """A matched string node and the string pieces it is built from."""
        self.done_literals.add(id(node))
        if isinstance(node, ast.JoinedStr):
            self.done_literals.update(id(v) for v in node.values)
        else:
            head = format_head(node)
            if head is not None:
                self.done_literals.add(id(head))

    def h_const(self, node):
        if isinstance(node.value, str):
            self.anywhere(node)
        return ()

    def h_joined(self, node):
        self.anywhere(node)
        for v in node.values:  # its text pieces are not strings of their own
            self.done_literals.add(id(v))
            if id(node) in self.muted:
                self.muted.add(id(v))
        return [v for v in reversed(node.values) if isinstance(v, ast.FormattedValue)]

    def h_binop(self, node):
        if self.p.anywhere and format_head(node) is not None:
            self.anywhere(node)
        return None

    def h_expr(self, node):
        if isinstance(node.value, (ast.Constant, ast.JoinedStr)):
            return ()  # a docstring or a string statement
        return None

    def h_raise(self, node):
        if node.exc is not None and (self.p.anywhere or self.p.device_lists):
            self.mute(node.exc)
        return None

    def h_seq(self, node):
        """A closed device list: several backends named, the out-of-tree one not. A list that
        names another vendor's device or collective backend is multi-vendor: its "cuda"/"nccl"
        are not a hard-coded choice for the ``anywhere`` rules."""
        if self.p.anywhere and any(
            isinstance(e, ast.Constant) and e.value in OTHER_VENDORS for e in node.elts
        ):
            self.muted.update(id(e) for e in node.elts)
        if self.p.device_lists and id(node) not in self.muted and not self.cuda_only:
            found = closed_device_list(self.p.device_lists, node)
            if found is not None:
                self.emit(*found)
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
                    self.mark(c)
                    self.emit(lr.rule, c, lt[0])
                    break

    def h_assign(self, node):
        if self.p.flags:
            flags.assigned(self, node)
        if (
            self.p.anywhere
            and isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        ):
            self.mute(node.value)  # names exported, not devices
        if (
            self.p.anywhere
            and node.value is not None
            and any(
                _MESSAGE_NAME.search(text_of(t))
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
        ):
            self.mute(node.value)  # msg = "...": text for people
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
        if self.p.device_types:
            for rule, hit, matched in device_type_compares(self, self.p.device_types, node):
                self.emit(rule, hit, matched)
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
        if self.p.anywhere:  # `"cuda" in str(err)`: a message searched, not a device
            for a, b in ((left, right), (right, left)):
                if _MESSAGE_NAME.search(text_of(b)):
                    self.mute(a)
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
                    self.mark(left)
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
                            for c2 in candidates(lit_side):
                                self.mark(c2)
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
        if node.msg is not None:
            self.mute(node.msg)
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
    ast.Constant: Scan.h_const,
    ast.JoinedStr: Scan.h_joined,
    ast.BinOp: Scan.h_binop,
    ast.Expr: Scan.h_expr,
    ast.Raise: Scan.h_raise,
    ast.List: Scan.h_seq,
    ast.Tuple: Scan.h_seq,
    ast.Set: Scan.h_seq,
    ast.arg: flags.h_arg,
    ast.keyword: flags.h_keyword,
}
