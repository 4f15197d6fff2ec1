"""Mutants of a hunk's added lines: small wrong versions of the patched file.

``derive(source, hunk, patch_text, limit)`` returns up to ``limit`` :class:`Mutant` objects for one
hunk of a series, each the whole file after the series with one node rewritten by an operator of
``mutants.yaml`` (the operators are data there, each with its reason). A node qualifies when it
starts on a line the hunk adds; a mutant is kept only when it compiles and differs from the file
and from every earlier mutant. ``revert`` puts the hunk's removed lines back in place of its added
ones (only when those are still one block after the later patches of the series).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import libcst as cst
import yaml
from libcst.metadata import MetadataWrapper, PositionProvider

from patches.validate import hunks as hunkcov

OPERATORS_FILE = Path(__file__).with_name("mutants.yaml")


@dataclass
class Mutant:
    operator: str
    line: int  # in the file after the series
    description: str  # `x.clone()` -> `x`
    source: str  # the whole mutated file

    def to_dict(self) -> dict:
        return {"operator": self.operator, "line": self.line, "description": self.description}


@lru_cache(maxsize=1)
def operators() -> dict[str, dict]:
    """name -> operator settings, in the file's order (the order mutants are tried in)."""
    data = yaml.safe_load(OPERATORS_FILE.read_text(encoding="utf-8"))
    return {op["name"]: op for op in data["operators"]}


def _code(node: cst.CSTNode) -> str:
    text = cst.Module(body=[]).code_for_node(node)
    text = " ".join(text.split())
    return text if len(text) <= 70 else text[:67] + "..."


class _Sites(cst.CSTVisitor):
    """Collect (operator, node, replacement) for nodes starting on the hunk's added lines."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: set[int]):
        self.lines = lines
        self.sites: list[tuple[str, int, cst.CSTNode, cst.CSTNode, str]] = []
        ops = operators()
        self.methods = set(ops.get("drop-method", {}).get("methods", []))
        self.devices = dict(ops.get("perturb-device", {}).get("devices", {}))
        self.predicates = tuple(ops.get("negate-predicate", {}).get("prefixes", []))

    def _add(self, op: str, node: cst.CSTNode, new: cst.CSTNode, shown: str = "") -> None:
        line = self.get_metadata(PositionProvider, node).start.line
        if line in self.lines and op in operators():
            if not shown:
                after = "`pass`" if isinstance(new, cst.Pass) else f"`{_code(new)}`"
                shown = f"`{_code(node)}` -> {after}"
            self.sites.append((op, line, node, new, shown))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if self.predicates and isinstance(name, str) and name.startswith(self.predicates):
            self._add("negate-predicate", node, _paren(cst.UnaryOperation(cst.Not(), node)))
        if isinstance(func, cst.Attribute) and func.attr.value in self.methods:
            self._add("drop-method", node, func.value)
        elif node.args and node.args[0].keyword is None and not node.args[0].star:
            self._add("drop-call", node, _paren(node.args[0].value))

    def _none(self, node: cst.CSTNode, value: cst.BaseExpression | None) -> None:
        if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
            shown = f"`{_code(value)}` -> `None`"
            self._add("none-value", node, node.with_changes(value=cst.Name("None")), shown)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._none(node, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._none(node, node.value)

    def visit_Return(self, node: cst.Return) -> None:
        self._none(node, node.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._none(node, node.value)

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self._add("drop-call", node, cst.Pass())

    def _negate(self, node: cst.CSTNode) -> None:
        test = node.test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        neg = cst.UnaryOperation(cst.Not(), test)
        shown = f"`{_code(node.test)}` -> `{_code(neg)}`"
        self._add("negate-guard", node, node.with_changes(test=neg), shown)

    def visit_If(self, node: cst.If) -> None:
        self._negate(node)

    def visit_While(self, node: cst.While) -> None:
        self._negate(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._negate(node)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._negate(node)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        other = cst.Or() if isinstance(node.operator, cst.And) else cst.And()
        self._add("swap-boolop", node, node.with_changes(operator=other))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in ("True", "False"):
            flipped = "False" if node.value == "True" else "True"
            self._add("flip-bool", node, node.with_changes(value=flipped))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        quote = node.quote
        body = node.value[len(node.prefix) + len(quote) : -len(quote)]
        if body in self.devices and "b" not in node.prefix.lower():
            new = f"{node.prefix}{quote}{self.devices[body]}{quote}"
            self._add("perturb-device", node, node.with_changes(value=new))

    def visit_Integer(self, node: cst.Integer) -> None:
        try:
            value = int(node.value, 0)
        except ValueError:
            return
        if 0 <= value < 16:  # indices and device ordinals, not sizes or magic numbers
            self._add("perturb-index", node, node.with_changes(value=str(value + 1)))


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.BaseString, cst.Integer, cst.Float)


def _paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` in brackets unless it is an atom: it takes the place of a call."""
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class _Replace(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, new: cst.CSTNode):
        self.target, self.new = target, new

    def on_leave(self, original_node, updated_node):
        if original_node is self.target:
            return self.new
        return updated_node


def _compiles(source: str) -> bool:
    try:
        compile(source, "<mutant>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def hunk_bodies(patch_text: str) -> list[tuple[list[str], list[str]]]:
    """(removed lines, added lines) of each hunk of a patch, in the order of parse_patch."""
    raws = hunkcov.parse_patch(patch_text)
    lines = patch_text.splitlines()
    out: list[tuple[list[str], list[str]]] = []
    i = 0
    for raw in raws:
        while i < len(lines) and not lines[i].startswith(f"@@ -{raw.old_start}"):
            i += 1
        body = [ln for ln in lines[i + 1 : i + 1 + len(raw.kinds) + 4] if not ln.startswith("\\")]
        body = body[: len(raw.kinds)]
        out.append(([b[1:] for b in body if b[:1] == "-"], [b[1:] for b in body if b[:1] == "+"]))
        i += 1
    return out


def revert_mutant(source: str, hunk: hunkcov.Hunk, patch_text: str) -> Mutant | None:
    """The file with the hunk's added lines replaced by its removed lines, when they are one
    block still in place after the series."""
    bodies = hunk_bodies(patch_text)
    if not hunk.added or hunk.index > len(bodies):
        return None
    removed, added = bodies[hunk.index - 1]
    first, last = hunk.added[0], hunk.added[-1]
    if len(hunk.added) != len(added) or last - first + 1 != len(added):
        return None  # a later patch changed part of the block: no clean revert
    lines = source.splitlines(keepends=True)
    if [ln.rstrip("\r\n") for ln in lines[first - 1 : last]] != added:
        return None
    mutated = "".join(lines[: first - 1] + [r + "\n" for r in removed] + lines[last:])
    shown = f"`{' '.join(' '.join(added).split())[:60]}` -> " + (
        f"`{' '.join(' '.join(removed).split())[:60]}`" if removed else "nothing"
    )
    return Mutant("revert", first, shown, mutated)


def _span(source: str, lines: set[int]) -> tuple[int, int] | None:
    """(first, last) line of the module-level statements that hold any of ``lines`` (decorators
    included); None when none does. libcst then reads only those: parsing a 25,000-line file
    such as common_methods_invocations.py costs minutes of CPU on a busy box, its one function
    a fraction of a second, and the mutants are the same text."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return 1, len(source.splitlines())  # libcst decides, on the whole file
    spans = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if any(first <= ln <= node.end_lineno for ln in lines):
            spans.append((first, node.end_lineno))
    if not spans:
        return None
    return min(a for a, _ in spans), max(b for _, b in spans)


def derive(source: str, hunk: hunkcov.Hunk, patch_text: str, limit: int) -> list[Mutant]:
    """Up to ``limit`` mutants of ``hunk`` in ``source`` (the file after the series), in the
    order of mutants.yaml's operators, then by line."""
    if limit <= 0 or not hunk.added:
        return []
    order = {name: i for i, name in enumerate(operators())}
    found: list[Mutant] = []
    seen = {source}
    rev = revert_mutant(source, hunk, patch_text) if "revert" in order else None
    if rev is not None:
        found.append(rev)
        seen.add(rev.source)
    span = _span(source, set(hunk.added))
    if span is None:
        return found[:limit]
    lines = source.splitlines(keepends=True)
    head, part, tail = (
        "".join(lines[: span[0] - 1]),
        "".join(lines[span[0] - 1 : span[1]]),
        "".join(lines[span[1] :]),
    )
    off = span[0] - 1
    try:
        wrapper = MetadataWrapper(cst.parse_module(part), unsafe_skip_copy=True)
    except cst.ParserSyntaxError:
        return []
    sites = _Sites({ln - off for ln in hunk.added})
    wrapper.visit(sites)
    for op, line, node, new, shown in sorted(sites.sites, key=lambda s: (order[s[0]], s[1])):
        if len(found) >= limit:
            break
        mutated = head + wrapper.module.visit(_Replace(node, new)).code + tail
        if mutated in seen or not _compiles(mutated):
            continue
        seen.add(mutated)
        found.append(Mutant(op, line + off, shown, mutated))
    return found[:limit]
