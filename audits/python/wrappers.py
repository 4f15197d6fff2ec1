"""Project-local wrappers of CUDA predicates and queries, followed across modules.

A wrapper is a module-level function of the scanned tree whose return value holds a CUDA
predicate or query (``def is_cuda_available(): return torch.cuda.is_available()``), or a
module-level flag set from one (``HAS_GPU = torch.cuda.device_count() > 0``). A function returning
a wrapper's result is a wrapper too, and so is a re-export (``from .utils import has_gpu`` in a
package's ``__init__``): hops are followed until nothing new turns up (``MAX_HOPS``), through the
one import resolver (``audits.resolve``). Every use of a wrapper elsewhere is a finding of the
wrapped rule whose message says "via `pkg.mod.is_cuda_available`"; a wrapper in a decorator
(``@skipUnless(has_cuda(), ...)``) or an ``if`` test makes that a gated definition or branch as a
direct predicate does. Nothing is imported or run.

This is the one tree-level pass of the audit: the driver (``audits.engine``) runs it after the
per-file scans, from their findings (which lines hold a qualifying query in a ``return`` or a flag
assignment) and the bytes of the tree's Python files (which mention a wrapper's name).
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from audits.model import Finding, Rule
from audits.python.findings import char_col, subsystem
from audits.python.plan import Plan, build_plan
from audits.python.segments import import_segments, parse_segments, top_level_pieces
from audits.python.visitor import Scan
from audits.resolve import bindings, dotted_parts, module_name, package_name, qualify
from audits.suppress import is_suppressed, suppressed_lines

MAX_HOPS = 4
_FLAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\s*(?::[^=]*)?=[^=]")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def qualifying(rule: Rule) -> bool:
    """Rules whose matches make a result a CUDA predicate or query: resolved names that are
    predicates or runtime queries (``torch.cuda.is_available``, ``device_count``), not the
    catch-alls (``torch.cuda.*``: any use of the module) nor names matched by spelling only."""
    m = rule.match
    return (
        rule.language == "python"
        and m["type"] == "name"
        and (bool(m.get("predicate")) or rule.category == "runtime")
        and not any(n.endswith(".*") for n in m["names"])
    )


# A flag is a predicate or a query result: a call, comparison, boolean or name, not a table.
_FLAG_VALUES = (ast.Call, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Name, ast.Attribute)


@dataclass(frozen=True)
class Wrapper:
    qual: str  # pkg.mod.fn
    rule: str  # the wrapped rule's id
    kind: str  # "call" (a function) or "reference" (a flag)


class _Module:
    """One parsed file: its module name, module-level import table and the top-level
    statements that may matter (imports and those holding ``hits``; the whole file when the
    pieces do not parse alone, as the scanner does)."""

    def __init__(self, relpath: str, text: str, prefix: str, hits: Sequence[int] = ()) -> None:
        self.relpath = relpath
        self.text = text
        self.tree = _parse(text, hits)
        self.name = module_name(relpath, prefix)
        package = package_name(relpath, prefix)
        self.imports: dict[str, str] = {}
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for local, q in bindings(node, package):
                    if q is not None:
                        self.imports[local] = q
        self.known: dict[str, Wrapper] = {}

    def lookup(self, head: str) -> str | None:
        q = self.imports.get(head)
        if q is None and f"{self.name}.{head}" in self.known:
            q = f"{self.name}.{head}"  # the module's own wrapper, by its bare name
        return q

    def resolve(self, node: ast.AST) -> str | None:
        parts = dotted_parts(node)
        return qualify(parts, self.lookup) if parts else None


def _parse(text: str, hits: Sequence[int]) -> ast.Module:
    data = text.encode()
    segs = top_level_pieces(data) if hits and len(data) >= 4096 else None
    if segs is not None:
        keep = set(import_segments(data, segs))
        keep |= {i for i, (a, b, _, _) in enumerate(segs) if any(a <= h <= b for h in hits)}
        body = parse_segments(data, [segs[i] for i in sorted(keep)], text.split("\n"), hits)
        if body is not None:
            return ast.Module(body=body, type_ignores=[])
    return ast.parse(text)


def _defined(node: ast.stmt) -> list[str]:
    if isinstance(node, _DEFS):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _values(node: ast.stmt) -> tuple[list[ast.AST], str, str]:
    """(the values that make it a wrapper, its kind, its name) of a top-level statement. A value
    with an alternative (``a or b``, ``a if c else b``) may hold for another vendor too
    (``HAS_GPU = HAS_CUDA or HAS_XPU``): not a CUDA wrapper."""
    if isinstance(node, _DEFS):
        values, kind, name = list(_returns(node)), "call", node.name
    elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _defined(node):
        if not isinstance(node.value, _FLAG_VALUES):
            return [], "", ""
        values, kind, name = [node.value], "reference", _defined(node)[0]
    else:
        return [], "", ""
    values = [v for v in values if not any(_alternative(n) for n in ast.walk(v))]
    return values, kind, name


def _alternative(n: ast.AST) -> bool:
    return isinstance(n, ast.IfExp) or (isinstance(n, ast.BoolOp) and isinstance(n.op, ast.Or))


def _returns(fn: ast.AST) -> Iterable[ast.AST]:
    """The return values of ``fn`` itself (not of nested functions or classes)."""
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return) and n.value is not None:
            yield n.value
        elif not isinstance(n, (*_DEFS, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


def _within(node: ast.AST, line: int, col: int) -> bool:
    return (node.lineno, node.col_offset) <= (line, col) <= (node.end_lineno, node.end_col_offset)


def _direct(mod: _Module, found: Sequence[Finding], rules: dict[str, Rule]) -> list[Wrapper]:
    """Hop 1: functions returning, and flags set from, a qualifying finding of this file."""
    marks = [(f.line, f.col - 1, f.rule) for f in found if f.rule in rules]
    out = []
    for node in _spanning(mod.tree.body, sorted(m[0] for m in marks)):
        values, kind, name = _values(node)
        if not values:
            continue
        for v in values:
            hit = next((r for ln, c, r in marks if _within(v, ln, c)), None)
            if hit is not None:
                out.append(Wrapper(f"{mod.name}.{name}", hit, kind))
                break
    return out


def _spanning(body: Sequence[ast.stmt], lines: Sequence[int]) -> list[ast.stmt]:
    """The statements of ``body`` whose line span (decorators included) holds one of ``lines``."""
    out = []
    for node in body:
        decos = getattr(node, "decorator_list", None)
        first = decos[0].lineno if decos else node.lineno
        i = bisect.bisect_left(lines, first)
        if i < len(lines) and lines[i] <= node.end_lineno:
            out.append(node)
    return out


def _mention_lines(text: str | bytes, names: Iterable[str]) -> list[int]:
    """Sorted 1-based numbers of the lines where one of ``names`` occurs."""
    nl = "\n" if isinstance(text, str) else b"\n"
    out = set()
    for n in names:
        key = n if isinstance(text, str) else n.encode()
        pos = text.find(key)
        while pos >= 0:
            out.add(text.count(nl, 0, pos) + 1)
            pos = text.find(key, pos + len(key))
    return sorted(out)


def _hop(mod: _Module, known: dict[str, Wrapper], names) -> list[tuple[Wrapper, str]]:
    """Hop n: functions returning a known wrapper's result, flags set from one, re-exports."""
    out = []
    for node in _spanning(mod.tree.body, _mention_lines(mod.text, names)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for local in [a.asname or a.name.split(".")[0] for a in node.names]:
                q = mod.imports.get(local)
                if q in known and f"{mod.name}.{local}" not in known:
                    w = known[q]
                    out.append((Wrapper(f"{mod.name}.{local}", w.rule, w.kind), q))
            continue
        values, kind, name = _values(node)
        if not values:
            continue
        qual = f"{mod.name}.{name}"
        if qual in known:
            continue
        for v in values:
            via = next((q for n in ast.walk(v) if (q := _ref(mod, n)) in known), None)
            if via is not None and via != qual:
                out.append((Wrapper(qual, known[via].rule, kind), via))
                break
    return out


def _ref(mod: _Module, node: ast.AST) -> str | None:
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
        getattr(node, "ctx", None), ast.Load
    ):
        return mod.resolve(node)
    return None


def follow(
    python_files: Sequence[str],
    read: Callable[[str], bytes | None],
    findings: Sequence[Finding],
    rules: Sequence[Rule],
    prefix: str = "",
) -> list[Finding]:
    """Findings at the uses of project-local wrappers (see the module docstring).

    ``python_files``: every Python file of the tree (relative paths); ``read(relpath)``: its
    bytes (None when unreadable); ``findings``: the per-file scans' findings (all rules)."""
    by_id = {r.id: r for r in rules}
    qual_rules = {r.id: r for r in rules if qualifying(r)}
    if not qual_rules:
        return []
    known: dict[str, Wrapper] = {}
    plan = build_plan(rules)
    mods: dict[str, tuple[set[int], _Module | None]] = {}
    texts: dict[str, str | None] = {}

    def load(rel: str, hits: Iterable[int]) -> _Module | None:
        """The file parsed for (at least) the top-level statements holding ``hits``."""
        want = set(hits)
        have = mods.get(rel)
        if have is not None and (have[1] is None or want <= have[0]):
            return have[1]
        want |= have[0] if have else set()
        if rel not in texts:
            data = read(rel)
            try:
                texts[rel] = data.decode("utf-8") if data is not None else None
            except UnicodeDecodeError:
                texts[rel] = None
        mod = None
        if texts[rel] is not None:
            try:
                mod = _Module(rel, texts[rel], prefix, sorted(want))
            except (SyntaxError, ValueError, RecursionError):
                mod = None
        if mod is not None:
            mod.known = known
        mods[rel] = (want, mod)
        return mod

    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.rule in qual_rules and (f.source.startswith("return ") or _FLAG.match(f.source)):
            by_path.setdefault(f.path, []).append(f)
    for rel in sorted(by_path):
        mod = load(rel, [f.line for f in by_path[rel]])
        for w in _direct(mod, by_path[rel], qual_rules) if mod else ():
            if _catalogued(plan, w.qual) or w.qual.endswith("__"):
                continue  # torch.cuda.is_available itself: its uses are direct findings
            known[w.qual] = w
    if not known:
        return []
    # which files mention which wrapper names, read once
    mentions: dict[str, set[str]] = {}
    blobs: dict[str, bytes] = {}
    for rel in python_files:
        data = read(rel)
        if data is not None:
            blobs[rel] = data
    searched: set[str] = set()
    for _ in range(MAX_HOPS):
        # a file mentions a wrapper when it holds its name and its module's (an import of it),
        # or it is the module itself
        homes: dict[str, set[str]] = {}
        for w in known.values():
            mod_name, _, name = w.qual.rpartition(".")
            homes.setdefault(name, set()).add(mod_name)
        names = set(homes) - searched
        if not names:
            break
        searched |= names
        by_comp: dict[bytes, set[str]] = {}  # a home module's last component -> names
        for n in names:
            for m in homes[n]:
                by_comp.setdefault(m.rsplit(".", 1)[-1].encode(), set()).add(n)
        homes_of = {m: n for n in names for m in homes[n]}
        for rel, data in blobs.items():
            cand = {n for c, ns in by_comp.items() if c in data for n in ns}
            own = homes_of.get(module_name(rel, prefix))
            if own is not None:
                cand.add(own)
            hit = {n for n in cand if n.encode() in data}
            if hit:
                mentions.setdefault(rel, set()).update(hit)
        new = []
        for rel in sorted(mentions):
            mod = load(rel, _mention_lines(blobs[rel], mentions[rel]))
            if mod is not None:
                new += [x for x in _hop(mod, known, mentions[rel]) if x[0].qual not in known]
        if not new:
            break
        for w, _via in new:
            if not _catalogued(plan, w.qual):
                known.setdefault(w.qual, w)
    return _uses(mentions, blobs, load, known, by_id, plan, prefix)


def _catalogued(plan: Plan, qual: str) -> bool:
    """A catalogued name (``torch.cuda.is_available``, ``TEST_CUDA``, ``skipCUDAIfNoMagma``):
    its uses are findings of their own already."""
    last = qual.rsplit(".", 1)[-1]
    return (
        Scan(plan, [], [], "").match_name(qual) is not None
        or last in plan.identifiers
        or any(last.startswith(p) for p, _ in plan.prefixes)
    )


def _uses(mentions, blobs, load, known, by_id, plan, prefix) -> list[Finding]:
    out: list[Finding] = []
    for rel in sorted(mentions):
        mod = load(rel, _mention_lines(blobs[rel], mentions[rel]))
        if mod is None:
            continue
        lines = mod.text.split("\n")
        sup = suppressed_lines(mod.text)
        parents: dict[int, ast.AST] = {}
        nodes: list[ast.AST] = []
        hit_lines = _mention_lines(mod.text, mentions[rel])
        stack = _spanning(mod.tree.body, hit_lines)
        for top in stack:
            parents[id(top)] = mod.tree
        while stack:  # only the nodes whose lines hold a mention (and their ancestors)
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
        seen = set()
        scopes: dict[int, set[str]] = {}
        for n in nodes:
            q = _ref(mod, n)
            w = known.get(q) if q else None
            if w is None or q == f"{mod.name}.{_defining(n, parents)}":
                continue
            if _shadowed(n, parents, scopes):
                continue
            p = parents.get(id(n))
            if isinstance(p, ast.Attribute) and p.value is n:
                continue  # part of a longer chain, resolved at its top
            rule = by_id[w.rule]
            kind = "call" if isinstance(p, ast.Call) and p.func is n else "reference"
            out += _finding(rule, n, kind, q, rel, lines, sup, prefix, seen)
            gate = _gate(n, parents, by_id, plan, rule)
            if gate is not None:
                g_rule, start, node = gate
                out += _finding(g_rule, start, "branch", q, rel, lines, sup, prefix, seen, node)
    return out


def _shadowed(node: ast.AST, parents: dict[int, ast.AST], scopes: dict[int, set[str]]) -> bool:
    """The reference's first name is bound inside an enclosing function (a parameter, an
    assignment, a nested def or a local import), so it is not the module-level wrapper."""
    head = node
    while isinstance(head, ast.Attribute):
        head = head.value
    name = head.id if isinstance(head, ast.Name) else ""
    p = parents.get(id(node))
    while p is not None:
        if isinstance(p, (*_DEFS, ast.Lambda)):
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
        elif isinstance(n, (*_DEFS, ast.ClassDef)):
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
    names = _defined(top) if isinstance(top, ast.stmt) else []
    return names[0] if names else ""


def _gate(node, parents, by_id, plan, rule):
    """A predicate wrapper in a decorator or an if/elif test: (branch rule, start, extent)."""
    if not rule.match.get("predicate"):
        return None
    child, p = node, parents.get(id(node))
    while p is not None:
        if isinstance(p, (*_DEFS, ast.ClassDef)) and child in p.decorator_list:
            r = plan.branches.get("decorator")
            return (r, child, p) if r else None
        if isinstance(p, ast.If) and child is p.test:
            r = plan.branches.get("if")
            return (r, p, p) if r else None
        if isinstance(p, ast.stmt):
            return None
        child, p = p, parents.get(id(p))
    return None


def _finding(rule, node, kind, qual, rel, lines, sup, prefix, seen, extent=None) -> list[Finding]:
    end = extent or node
    key = (rule.id, node.lineno, node.col_offset)
    if key in seen or (sup and is_suppressed(sup, node.lineno, rule)):
        return []
    seen.add(key)
    rep = rule.replacement if "{name}" not in (rule.replacement or "") else None
    base = "make the wrapper neutral" + (f" (the wrapped call: use {rep})" if rep else "")
    line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
    return [
        Finding(
            rule.id,
            rule.name,
            rule.category,
            kind,
            rel,
            node.lineno,
            char_col(lines, node.lineno, node.col_offset),
            end.end_lineno,
            char_col(lines, end.end_lineno, end.end_col_offset),
            line.strip(),
            subsystem(prefix + rel),
            f"{rule.title} via `{qual}`: {base}",
            None,  # the call site names the wrapper: nothing to rename here
            "manual",
        )
    ]
