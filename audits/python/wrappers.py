"""Project-local wrappers of CUDA predicates and queries, followed across modules.

A wrapper is a module-level function of the scanned tree whose return value holds a CUDA
predicate or query (``def is_cuda_available(): return torch.cuda.is_available()``), or a
module-level flag set from one (``HAS_GPU = torch.cuda.device_count() > 0``). A function returning
a wrapper's result is a wrapper too, and so is a re-export (``from .utils import has_gpu`` in a
package's ``__init__``): hops are followed until nothing new turns up (``MAX_HOPS``), through the
one import resolver (``audits.resolve``). Every use of a wrapper elsewhere is a finding of the
wrapped rule whose message says "via `pkg.mod.is_cuda_available`" (``wrapper_uses``). Nothing is
imported or run.

This is the one tree-level pass of the audit. It reads nothing the scan has not read: the driver
(``audits.wrapper_pass``) gives it the per-file scans' findings (which lines hold a qualifying
query in a ``return`` or a flag assignment) and every Python file's words, collected by the
scan's workers from their one read of each file (which files mention a wrapper's name); only the
files that define or mention a wrapper are parsed here.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Sequence

from audits.model import Finding, Rule
from audits.python.plan import Plan, build_plan
from audits.python.returned import returned_values
from audits.python.visitor import Scan
from audits.python.wrapper_tree import (
    DEFS,
    Module,
    Reader,
    Tree,
    Wrapper,
    defined,
    mention_lines,
    ref,
    spanning,
)
from audits.python.wrapper_uses import uses
from audits.resolve import module_name

__all__ = ["MAX_HOPS", "Wrapper", "follow", "qualifying"]

MAX_HOPS = 4
_FLAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\s*(?::[^=]*)?=[^=]")
# A flag is a predicate or a query result: a call, comparison, boolean or name, not a table.
_FLAG_VALUES = (ast.Call, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Name, ast.Attribute)


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


def follow(
    python_files: Sequence[str],
    words: Reader,
    read: Reader,
    findings: Sequence[Finding],
    rules: Sequence[Rule],
    prefix: str = "",
    known: dict[str, Wrapper] | None = None,
) -> list[Finding]:
    """Findings at the uses of project-local wrappers (see the module docstring).

    ``python_files``: every Python file of the tree (relative paths, sorted); ``words(relpath)``:
    a text holding every name the file holds (its bytes will do; None when unreadable);
    ``read(relpath)``: its bytes; ``findings``: the per-file scans' findings (all rules).
    ``known``: filled with the wrappers found, qualified name -> ``Wrapper`` (its ``via``: the
    wrapper it returns or re-exports)."""
    tree, plan, mentions = _known(python_files, words, read, findings, rules, prefix)
    if known is not None:
        known.update(tree.known)
    if not tree.known:
        return []
    return uses(tree, mentions, {r.id: r for r in rules}, plan)


def _known(python_files, words, read, findings, rules, prefix) -> tuple[Tree, Plan, dict]:
    """(the tree with its known wrappers, the rules' plan, file -> the wrapper names it
    mentions)."""
    tree = Tree(python_files, words, read, prefix)
    qual_rules = {r.id: r for r in rules if qualifying(r)}
    if not qual_rules:
        return tree, None, {}
    plan = build_plan(rules)
    _find_direct(tree, findings, qual_rules, plan)
    if not tree.known:
        return tree, plan, {}
    return tree, plan, _follow_hops(tree, plan)


def _find_direct(tree: Tree, findings, qual_rules: dict[str, Rule], plan: Plan) -> None:
    """Hop 1 into ``tree.known``: functions returning, and flags set from, a qualifying finding."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.rule in qual_rules and (f.source.startswith("return ") or _FLAG.match(f.source)):
            by_path.setdefault(f.path, []).append(f)
    for rel in sorted(by_path):
        mod = tree.load(rel, [f.line for f in by_path[rel]])
        for w in _direct(mod, by_path[rel], qual_rules) if mod else ():
            if _catalogued(plan, w.qual) or w.qual.endswith("__"):
                continue  # torch.cuda.is_available itself: its uses are direct findings
            tree.known[w.qual] = w


def _follow_hops(tree: Tree, plan: Plan) -> dict[str, set[str]]:
    """Hops 2.. into ``tree.known``; returns file -> the wrapper names it mentions."""
    mentions: dict[str, set[str]] = {}
    index = _WordIndex(tree)
    searched: set[str] = set()
    for _ in range(MAX_HOPS):
        homes: dict[str, set[str]] = {}  # a wrapper name -> the modules defining one
        for w in tree.known.values():
            mod_name, _, name = w.qual.rpartition(".")
            homes.setdefault(name, set()).add(mod_name)
        names = set(homes) - searched
        if not names:
            break
        searched |= names
        _add_mentions(index, {n: homes[n] for n in names}, mentions)
        new = []
        for rel in sorted(mentions):
            mod = tree.load_mentions(rel, mentions[rel])
            if mod is not None:
                new += [x for x in _hop(mod, tree.known, mentions[rel]) if x.qual not in tree.known]
        if not new:
            break
        for w in new:
            if not _catalogued(plan, w.qual):
                tree.known.setdefault(w.qual, w)
    return mentions


def _add_mentions(index: _WordIndex, homes: dict[str, set[str]], mentions) -> None:
    """A file mentions a wrapper when it holds its name and its module's last component (an
    import of it), or it is the wrapper's module itself."""
    for n, mods in homes.items():
        holding = index.files_with(n)
        if not holding:
            continue
        near: set[str] = set()
        for m in mods:
            near |= index.files_with(m.rsplit(".", 1)[-1]) | index.of_module.get(m, set())
        for rel in holding & near:
            mentions.setdefault(rel, set()).add(n)


class _WordIndex:
    """Every file's words in one text, to find the files holding a string at C speed."""

    def __init__(self, tree: Tree) -> None:
        parts: list[bytes] = []
        self.rels: list[str] = []
        self.starts: list[int] = []
        self.of_module: dict[str, set[str]] = {}
        at = 0
        for rel in tree.files:
            found = tree.words(rel)
            if found is None:
                continue
            self.rels.append(rel)
            self.starts.append(at)
            self.of_module.setdefault(module_name(rel, tree.prefix), set()).add(rel)
            parts.append(found)
            at += len(found) + 1
        self.text = b"\0".join(parts)  # no name holds a NUL: no match spans two files
        self._memo: dict[str, set[str]] = {}

    def files_with(self, name: str) -> set[str]:
        if name not in self._memo:
            key, out = name.encode(), set()
            find, starts, n = self.text.find, self.starts, len(self.starts)
            pos = find(key)
            while pos >= 0:
                i = bisect.bisect_right(starts, pos) - 1
                out.add(self.rels[i])
                pos = find(key, starts[i + 1]) if i + 1 < n else -1
            self._memo[name] = out
        return self._memo[name]


def _values(node: ast.stmt) -> tuple[list[ast.AST], str, str]:
    """(the values that may make it a wrapper, its kind, its name) of a top-level statement; a
    value makes it one only when ``_plain`` too (checked last: it walks the whole value)."""
    if isinstance(node, DEFS):
        return returned_values(node), "call", node.name
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and defined(node):
        if isinstance(node.value, _FLAG_VALUES):
            return [node.value], "reference", defined(node)[0]
    return [], "", ""


def _plain(value: ast.AST) -> bool:
    """A value with an alternative (``a or b``, ``a if c else b``) may hold for another vendor
    too (``HAS_GPU = HAS_CUDA or HAS_XPU``): not a CUDA wrapper."""
    for n in ast.walk(value):
        if isinstance(n, ast.IfExp) or (isinstance(n, ast.BoolOp) and isinstance(n.op, ast.Or)):
            return False
    return True


def _within(node: ast.AST, line: int, col: int) -> bool:
    return (node.lineno, node.col_offset) <= (line, col) <= (node.end_lineno, node.end_col_offset)


def _direct(mod: Module, found: Sequence[Finding], rules: dict[str, Rule]) -> list[Wrapper]:
    """Hop 1: functions returning, and flags set from, a qualifying finding of this file."""
    marks = [(f.line, f.col - 1, f.rule) for f in found if f.rule in rules]
    out = []
    for node in spanning(mod.tree.body, sorted(m[0] for m in marks)):
        values, kind, name = _values(node)
        for v in values:
            hit = next((r for ln, c, r in marks if _within(v, ln, c)), None)
            if hit is not None and _plain(v):
                out.append(Wrapper(f"{mod.name}.{name}", hit, kind))
                break
    return out


def _hop(mod: Module, known: dict[str, Wrapper], names) -> list[Wrapper]:
    """Hop n: functions returning a known wrapper's result, flags set from one, re-exports."""
    out = []
    for node in spanning(mod.tree.body, mention_lines(mod.text, names)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for local in [a.asname or a.name.split(".")[0] for a in node.names]:
                q = mod.imports.get(local)
                if q in known and f"{mod.name}.{local}" not in known:
                    w = known[q]
                    out.append(Wrapper(f"{mod.name}.{local}", w.rule, w.kind, q))
            continue
        names_here = defined(node)
        if names_here and f"{mod.name}.{names_here[0]}" in known:
            continue
        values, kind, name = _values(node)
        qual = f"{mod.name}.{name}"
        for v in values:
            via = next((q for n in ast.walk(v) if (q := ref(mod, n)) in known), None)
            if via is not None and via != qual and _plain(v):
                out.append(Wrapper(qual, known[via].rule, kind, via))
                break
    return out


def _catalogued(plan: Plan, qual: str) -> bool:
    """A catalogued name (``torch.cuda.is_available``, ``TEST_CUDA``, ``skipCUDAIfNoMagma``):
    its uses are findings of their own already."""
    last = qual.rsplit(".", 1)[-1]
    return (
        Scan(plan, [], [], "").match_name(qual) is not None
        or last in plan.identifiers
        or any(last.startswith(p) for p, _ in plan.prefixes)
    )
