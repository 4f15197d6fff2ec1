"""The uses of known wrappers: each is a finding of the wrapped rule whose message says "via
`pkg.mod.fn`"; a predicate wrapper in a decorator or an ``if`` test also gates the definition or
branch, as a direct predicate does. A name bound locally (a parameter, a nested def, a local
import) or the wrapper's own definition is not a use."""

from __future__ import annotations

import ast
import bisect

from audits.model import Finding, Rule
from audits.python.findings import char_col, subsystem
from audits.python.plan import Plan
from audits.python.wrapper_tree import DEFS, Module, Tree, defined, mention_lines, ref, spanning
from audits.suppress import is_suppressed, suppressed_lines

_VIA = " via `"  # the message names the wrapper: "<rule title> via `pkg.mod.fn`: ..."


def wrapper_of(f: Finding) -> str | None:
    """The wrapper a finding of this pass is a use of (``pkg.mod.fn``); None for any other
    finding (the per-file scan's, whose replacement or message names no wrapper)."""
    head, sep, rest = f.message.partition(_VIA)
    if not sep or f.replacement is not None or f.safety != "manual":
        return None
    return rest.split("`", 1)[0] or None


def uses(
    tree: Tree, mentions: dict[str, set[str]], by_id: dict[str, Rule], plan: Plan
) -> list[Finding]:
    """The findings at the uses of ``tree.known`` in the files that mention them."""
    out: list[Finding] = []
    for rel in sorted(mentions):
        mod = tree.load_mentions(rel, mentions[rel])
        if mod is None:
            continue
        site = _Site(rel, mod.text.split("\n"), suppressed_lines(mod.text), tree.prefix)
        parents, nodes = _nodes_on(mod, mention_lines(mod.text, mentions[rel]))
        scopes: dict[int, set[str]] = {}
        for n in nodes:
            q = ref(mod, n)
            w = tree.known.get(q) if q else None
            if w is None or q == f"{mod.name}.{_defining(n, parents)}":
                continue
            if _shadowed(n, parents, scopes):
                continue
            p = parents.get(id(n))
            if isinstance(p, ast.Attribute) and p.value is n:
                continue  # part of a longer chain, resolved at its top
            rule = by_id[w.rule]
            kind = "call" if isinstance(p, ast.Call) and p.func is n else "reference"
            out += site.finding(rule, n, kind, q)
            gate = _gate(n, parents, plan, rule)
            if gate is not None:
                g_rule, start, node = gate
                out += site.finding(g_rule, start, "branch", q, node)
    return out


def _nodes_on(mod: Module, hit_lines: list[int]) -> tuple[dict[int, ast.AST], list[ast.AST]]:
    """(parents by child id, nodes) of the nodes whose lines hold a mention, and their ancestors."""
    parents: dict[int, ast.AST] = {}
    nodes: list[ast.AST] = []
    stack = spanning(mod.tree.body, hit_lines)
    for top in stack:
        parents[id(top)] = mod.tree
    while stack:
        n = stack.pop()
        nodes.append(n)
        for c in ast.iter_child_nodes(n):
            if hasattr(c, "end_lineno"):
                decos = getattr(c, "decorator_list", None)
                i = bisect.bisect_left(hit_lines, decos[0].lineno if decos else c.lineno)
                if not (i < len(hit_lines) and hit_lines[i] <= c.end_lineno):
                    continue
            parents[id(c)] = n
            stack.append(c)
    return parents, nodes


def _shadowed(node: ast.AST, parents: dict[int, ast.AST], scopes: dict[int, set[str]]) -> bool:
    """The reference's first name is bound inside an enclosing function (a parameter, an
    assignment, a nested def or a local import), so it is not the module-level wrapper."""
    head = node
    while isinstance(head, ast.Attribute):
        head = head.value
    name = head.id if isinstance(head, ast.Name) else ""
    p = parents.get(id(node))
    while p is not None:
        if isinstance(p, (*DEFS, ast.Lambda)):
            if id(p) not in scopes:
                scopes[id(p)] = _locals(p)
            if name in scopes[id(p)]:
                return True
        p = parents.get(id(p))
    return False


def _locals(fn: ast.AST) -> set[str]:
    a = fn.args
    out = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x}
    stack = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (*DEFS, ast.ClassDef)):
            out.add(n.name)
            continue  # its own body is its own scope
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update(x.asname or x.name.split(".")[0] for x in n.names)
        elif isinstance(n, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return out


def _defining(node: ast.AST, parents: dict[int, ast.AST]) -> str:
    """The top-level function or flag the node sits in (its own definition is not a use)."""
    top = node
    while id(top) in parents and not isinstance(parents[id(top)], ast.Module):
        top = parents[id(top)]
    names = defined(top) if isinstance(top, ast.stmt) else []
    return names[0] if names else ""


def _gate(node, parents, plan: Plan, rule: Rule):
    """A predicate wrapper in a decorator or an if/elif test: (branch rule, start, extent)."""
    if not rule.match.get("predicate"):
        return None
    child, p = node, parents.get(id(node))
    while p is not None:
        if isinstance(p, (*DEFS, ast.ClassDef)) and child in p.decorator_list:
            r = plan.branches.get("decorator")
            return (r, child, p) if r else None
        if isinstance(p, ast.If) and child is p.test:
            r = plan.branches.get("if")
            return (r, p, p) if r else None
        if isinstance(p, ast.stmt):
            return None
        child, p = p, parents.get(id(p))
    return None


class _Site:
    """One file's findings: each (rule, line, column) once, suppression comments honoured."""

    def __init__(self, rel: str, lines: list[str], sup, prefix: str) -> None:
        self.rel, self.lines, self.sup, self.prefix = rel, lines, sup, prefix
        self.seen: set[tuple[str, int, int]] = set()

    def finding(self, rule: Rule, node, kind: str, qual: str, extent=None) -> list[Finding]:
        end = extent or node
        key = (rule.id, node.lineno, node.col_offset)
        if key in self.seen or (self.sup and is_suppressed(self.sup, node.lineno, rule)):
            return []
        self.seen.add(key)
        rep = rule.replacement if "{name}" not in (rule.replacement or "") else None
        base = "make the wrapper neutral" + (f" (the wrapped call: use {rep})" if rep else "")
        lines = self.lines
        line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
        return [
            Finding(
                rule.id,
                rule.name,
                rule.category,
                kind,
                self.rel,
                node.lineno,
                char_col(lines, node.lineno, node.col_offset),
                end.end_lineno,
                char_col(lines, end.end_lineno, end.end_col_offset),
                line.strip(),
                subsystem(self.prefix + self.rel),
                f"{rule.title}{_VIA}{qual}`: {base}",
                None,  # the call site names the wrapper: nothing to rename here
                "manual",
            )
        ]
