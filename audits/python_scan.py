"""The Python scanner: ``ast`` with import/alias resolution, driven by the catalogue's match specs.

``scan_source(data, relpath, rules, *, package_prefix="")`` is the registry interface (see
audits/languages.py). ``package_prefix`` is prepended to ``relpath`` for the subsystem and for
resolving relative imports when the scanned root is itself a package (e.g. ``torch/``).

What is (not) a finding follows from the AST: comments are not in it, and string constants only
count in the contexts a literal rule names (device keywords, ``torch.device(...)``, comparisons
with device-ish expressions, ...), so docstrings and log/error messages never match. Names only
match through import resolution, so a local ``cuda_ok`` or ``self.cuda_graph`` is not a finding.

Speed: only statements whose line span contains a CUDA token (or an alias bound to a CUDA name)
are visited; files from ``SEGMENT_MIN_BYTES`` up are parsed partially, each time as one parse of
the file with all other lines blanked: first every top-level statement that may hold a
module-level import (imports nested in if/try/with/... blocks bind aliases too), then the other
top-level statements holding such lines, and of a large class/def only its header and the body
statements holding them. Whenever the kept pieces do not parse, or do not begin statements where
expected, the whole file is parsed instead.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from .model import FileError, Finding, Rule
from .resolve import bindings, dotted_parts, package_name, qualify
from .suppress import is_suppressed, suppressed_lines

__all__ = ["scan_source", "subsystem"]

# Lower-cased tokens; every Python rule names something containing one (a catalogue test checks it).
TOKENS = (b"cuda", b"cudnn", b"nccl", b"multigpu")
SEGMENT_MIN_BYTES = 4 * 1024  # below this a whole-file parse costs about the same (performance.md)


def subsystem(path: str) -> str:
    """First two directory components (``torch/_dynamo``, ``test/distributed``); ``.`` at top."""
    dirs = path.split("/")[:-1]
    return "/".join(dirs[:2]) if dirs else "."


# ----------------------------------------------------------------------------------------- plan
@dataclass
class _LiteralRule:
    rule: Rule
    values: tuple[str, ...]
    keywords: frozenset[str]
    calls: frozenset[str]
    methods: frozenset[str]
    targets: re.Pattern | None
    compare: re.Pattern | None
    contains: re.Pattern | None


@dataclass
class _Plan:
    exact: dict[str, Rule] = field(default_factory=dict)
    wildcard: dict[str, Rule] = field(default_factory=dict)  # "torch.cuda" for "torch.cuda.*"
    methods: dict[str, Rule] = field(default_factory=dict)
    attributes: dict[str, Rule] = field(default_factory=dict)
    identifiers: dict[str, Rule] = field(default_factory=dict)
    prefixes: list[tuple[str, Rule]] = field(default_factory=list)
    literals: list[_LiteralRule] = field(default_factory=list)
    lit_keywords: set[str] = field(default_factory=set)
    lit_calls: set[str] = field(default_factory=set)
    lit_methods: set[str] = field(default_factory=set)
    has_targets: bool = False
    has_compare: bool = False
    branches: dict[str, Rule] = field(default_factory=dict)  # node kind -> rule
    predicates: set[str] = field(default_factory=set)  # rule ids
    matched: dict[str, Any] = field(default_factory=dict)  # memo of _Scan.match_name


_PLANS: dict[tuple[str, ...], _Plan] = {}


def _plan(rules: Sequence[Rule]) -> _Plan:
    key = tuple(r.id for r in rules)
    if key in _PLANS:
        return _PLANS[key]
    p = _Plan()
    for r in rules:
        if r.language != "python":
            continue
        m = r.match
        t = m["type"]
        if m.get("predicate"):
            p.predicates.add(r.id)
        if t == "name":
            for n in m["names"]:
                if n.endswith(".*"):
                    p.wildcard.setdefault(n[:-2], r)
                else:
                    p.exact.setdefault(n, r)
        elif t == "method":
            for n in m["methods"]:
                p.methods.setdefault(n, r)
        elif t == "attribute":
            for n in m["attributes"]:
                p.attributes.setdefault(n, r)
        elif t == "identifier":
            for n in m.get("identifiers", []):
                p.identifiers.setdefault(n, r)
            p.prefixes += [(n, r) for n in m.get("prefixes", [])]
        elif t == "literal":
            lr = _LiteralRule(
                r,
                tuple(m["values"]),
                frozenset(m.get("keywords", ())),
                frozenset(m.get("calls", ())),
                frozenset(m.get("methods", ())),
                *(re.compile(m[k]) if k in m else None for k in ("targets", "compare", "contains")),
            )
            p.literals.append(lr)
            p.lit_keywords |= lr.keywords
            p.lit_calls |= lr.calls
            p.lit_methods |= lr.methods
            p.has_targets |= lr.targets is not None
            p.has_compare |= lr.compare is not None or lr.contains is not None
        elif t == "branch":
            for n in m["nodes"]:
                p.branches.setdefault(n, r)
    _PLANS[key] = p
    return p


# ---------------------------------------------------------------------------------- utilities
_dotted = dotted_parts


def _text(node: ast.AST, depth: int = 0) -> str:
    """A cheap textual rendering of an operand, for the compare/targets regexes."""
    if depth > 8:
        return ""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_text(node.value, depth + 1)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_text(node.func, depth + 1)}({','.join(_text(a, depth + 1) for a in node.args)})"
    if isinstance(node, ast.Subscript):
        return f"{_text(node.value, depth + 1)}[]"
    return ""


def _literal_text(node: ast.AST) -> tuple[str, bool] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, False
    if isinstance(node, ast.JoinedStr):
        head = node.values[0] if node.values else None
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return head.value, True
    return None


def _value_matches(text: str, is_fstring: bool, values: tuple[str, ...]) -> bool:
    for v in values:
        if text == v or (text.startswith(v + ":") and (is_fstring or text[len(v) + 1 :].isdigit())):
            return True
    return False


def _candidates(node: ast.AST) -> Iterator[ast.AST]:
    """String literal nodes an expression may evaluate to (ternaries, `or`, sequences)."""
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        yield node
    elif isinstance(node, ast.IfExp):
        yield from _candidates(node.body)
        yield from _candidates(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for v in node.values:
            yield from _candidates(v)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for v in node.elts:
            yield from _candidates(v)


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


# ------------------------------------------------------------------------------------ visitor
class _Scan:
    def __init__(self, plan: _Plan, lines: list[str], hits: list[int], package: str) -> None:
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
        parts = _dotted(node)
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
        while isinstance(base, ast.Attribute) and _dotted(base) is None:
            if base.attr in p.attributes:
                self.emit(p.attributes[base.attr], base, base.attr)
            base = base.value
        return (base,)

    def h_call(self, node: ast.Call):
        p = self.p
        func = node.func
        fname = None
        parts = _dotted(func)
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
        for c in _candidates(expr):
            if id(c) in self.done_literals:
                continue
            lt = _literal_text(c)
            if lt is None:
                continue
            for lr in self.p.literals:
                if ok(lr) and _value_matches(lt[0], lt[1], lr.values):
                    self.done_literals.add(id(c))
                    self.emit(lr.rule, c, lt[0])
                    break

    def h_assign(self, node):
        if self.p.has_targets and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                txt = _text(t)
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
            lt = _literal_text(left)  # `"cuda" in <expr>`: the substring rules come first
            for lr in self.p.literals:
                if (
                    lt
                    and lr.contains is not None
                    and _value_matches(lt[0], lt[1], lr.values)
                    and lr.contains.search(_text(right))
                ):
                    self.add_span(lr.rule, left, right, lt[0])
                    return
        for lr in self.p.literals:
            if lr.compare is not None:
                for lit_side, other in ((left, right), (right, left)):
                    if isinstance(other, seqs):
                        continue
                    for c in _candidates(lit_side):
                        lt = _literal_text(c)
                        if (
                            lt
                            and _value_matches(lt[0], lt[1], lr.values)
                            and lr.compare.search(_text(other))
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


_Scan.HANDLERS = {
    ast.Import: _Scan.h_import,
    ast.ImportFrom: _Scan.h_import,
    ast.Attribute: _Scan.h_chain,
    ast.Name: _Scan.h_chain,
    ast.Call: _Scan.h_call,
    ast.Assign: _Scan.h_assign,
    ast.AnnAssign: _Scan.h_assign,
    ast.FunctionDef: _Scan.h_def,
    ast.AsyncFunctionDef: _Scan.h_def,
    ast.ClassDef: _Scan.h_def,
    ast.Compare: _Scan.h_compare,
    ast.If: _Scan.h_if,
    ast.IfExp: _Scan.h_ifexp,
    ast.Assert: _Scan.h_assert,
}


# ------------------------------------------------------------------------- parsing strategies
# A top-level statement starts at column 0 with something that can begin a statement and is not a
# continuation keyword; starts inside triple-quoted strings are dropped, decorators stay with
# their definition. Any piece that does not parse on its own makes the caller parse the file.
_STARTS = re.compile(rb"^(?=[A-Za-z_@\[({'\"0-9.\-~])(?!(?:else|elif|except|finally)\b)", re.M)
# the same after a newline: a pattern that begins with a literal is searched for fast
_NL_STARTS = re.compile(rb"\n(?=[A-Za-z_@\[({'\"0-9.\-~])(?!(?:else|elif|except|finally)\b)")


def _segments(data: bytes) -> list[tuple[int, int, int, int]] | None:
    """Top-level statements as (first_line, last_line, stmt_line, stmt_offset), lines 1-based:
    the piece spans first..last and its statement starts at column 0 of ``stmt_line`` (byte
    ``stmt_offset``); the first piece also holds the comments before it. None when unsure."""
    strings = _triple_spans(data)
    if strings is None:
        return None
    segs: list[tuple[int, int]] = []
    line, last, si, prev_deco = 1, 0, 0, False
    at = [0] if _STARTS.match(data) else []
    for pos in at + [m.start() + 1 for m in _NL_STARTS.finditer(data)]:
        while si < len(strings) and strings[si][1] <= pos:
            si += 1
        if si < len(strings) and strings[si][0] < pos:
            continue  # inside a triple-quoted string
        line += data.count(b"\n", last, pos)
        last = pos
        if not prev_deco:
            segs.append((line, pos))
        prev_deco = data.startswith(b"@", pos)
    if not segs:
        return None
    total = data.count(b"\n", last) + line
    return [
        (1 if i == 0 else a, segs[i + 1][0] - 1 if i + 1 < len(segs) else total, a, off)
        for i, (a, off) in enumerate(segs)
    ]


def _import_segments(data: bytes, segs) -> list[int]:
    """Indices of the pieces that may hold a module-level import: every piece but a class/def
    with the word ``import`` in it (a string or comment saying it only costs parse time)."""
    out: list[int] = []
    offs = [0] + [s[3] for s in segs[1:]]  # the first piece from the file's start
    find, n = data.find, len(segs)
    pos = find(b"import")
    while pos >= 0:
        end = pos + 6
        if (pos == 0 or not _WORD.match(data, pos - 1)) and not _WORD.match(data, end):
            i = bisect.bisect_right(offs, pos) - 1
            if i >= 0 and not _DEF_START.match(data, segs[i][3]):
                out.append(i)
            if i + 1 >= n:
                break
            end = offs[i + 1]  # one word is enough: go on with the next piece
        pos = find(b"import", end)
    return out


_WORD = re.compile(rb"\w")


def _parse_segments(
    data: bytes, segs, lines: list[str], hits: Sequence[int] | None = None
) -> list[ast.stmt] | None:
    """Parse the pieces ``segs`` (from ``_segments``); None if that fails.

    One ``ast.parse`` of the file with every other line blanked, so nodes keep their true lines
    and columns. With ``hits``, a large class/def is kept as its header plus only the body
    statements that hold a hit line and its last one (see ``_plan_def``): the visitor skips
    every statement without a hit line anyway. The result is checked: each kept piece must begin
    a statement of its body, else None (the caller then parses the whole file).
    """
    regions: list[tuple[int, int]] = []
    top = _Check(0, 0, [], [])
    for first, last, line, off in segs:
        top.starts.append(line)
        if (
            hits is not None
            and first == line
            and last - line >= SPLIT_MIN_LINES
            and _DEF_START.match(data, off)
        ):
            sub = _plan_def(lines, line, last, "", hits, regions)
            if sub is not None:
                top.children.append(sub)
                continue
        regions.append((first, last))
    if not regions:
        return []
    parts: list[str] = []
    at = 1  # the line the next part starts on
    for a, b in regions:
        parts.append("\n" * (a - at))
        parts.append("\n".join(lines[a - 1 : b]))
        at = b
    try:
        body = ast.parse("".join(parts)).body
    except SyntaxError:
        return None
    return body if _verify(body, top) else None


# Splitting a class/def: its body statements start at the body's indentation. As for top-level
# segments a wrong boundary is possible in odd layouts (a continuation line at exactly the body
# indentation); a boundary after a line that ends open is not taken, and a kept piece that does
# not begin a statement of its body after parsing sends the caller to a whole-file parse.
SPLIT_MIN_LINES = 40  # smaller statements are kept whole
_DEF_START = re.compile(rb"(?:class|def|async[ \t]+def)\b|@")
_DEF_START_STR = re.compile(_DEF_START.pattern.decode())
_INDENTED = re.compile(r"\n([ \t]+)(?=[A-Za-z_@\[({'\"0-9.\-~])")
_OPEN_END = re.compile(r"[(\[{,\\]\s*$")  # without brackets only a backslash continues a line
_MEMBER: dict[str, re.Pattern] = {}
_OUTER: dict[int, re.Pattern] = {}
_HEADER_TRIES = 8
_DEFS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class _Check:
    """Expected shape: kept pieces start at ``starts`` (indentation ``col``) in this body."""

    line: int
    col: int
    starts: list[int]
    children: list["_Check"]


def _start(n: ast.stmt) -> tuple[int, int]:
    d = getattr(n, "decorator_list", None)
    return (d[0].lineno, d[0].col_offset - 1) if d else (n.lineno, n.col_offset)


def _verify(body: list[ast.stmt], chk: _Check) -> bool:
    by_line = {}
    for n in body:
        by_line.setdefault(_start(n)[0], n)
    for s in chk.starts:
        n = by_line.get(s)
        if n is None or _start(n) != (s, chk.col):
            return False
    for c in chk.children:
        n = by_line.get(c.line)
        if not isinstance(n, _DEFS) or not _verify(n.body, c):
            return False
    return True


def _triple_spans(text):
    """(start, end) of the triple-quoted strings in ``text`` (str or bytes), paired naively
    left to right; None when one is left open."""
    q2, q1 = ('"""', "'''") if isinstance(text, str) else (b'"""', b"'''")
    marks: list[tuple[int, bool]] = []
    for q, dq in ((q2, True), (q1, False)):
        find = text.find
        pos = find(q)
        while pos >= 0:
            marks.append((pos, dq))
            pos = find(q, pos + 3)
    marks.sort()
    spans: list[tuple[int, int]] = []
    open_at, quote = -1, True
    for pos, dq in marks:
        if open_at < 0:
            open_at, quote = pos, dq
        elif dq == quote:
            spans.append((open_at, pos + 3))
            open_at = -1
    return None if open_at >= 0 else spans


def _in_spans(spans: list[tuple[int, int]], pos: int) -> bool:
    i = bisect.bisect_right(spans, (pos, 1 << 62)) - 1
    return i >= 0 and spans[i][0] < pos < spans[i][1]


def _plan_def(
    lines: list[str],
    first: int,
    last: int,
    indent: str,
    hits: Sequence[int],
    regions: list[tuple[int, int]],
) -> _Check | None:
    """Append to ``regions`` the lines to keep of the class/def spanning first..last: its header,
    the body statements holding a hit line and the last one (which fixes the node's end). Returns
    the shape to verify after parsing; None (``regions`` untouched) when the layout is unclear."""
    text = "\n".join(lines[first - 1 : last])
    strings = _triple_spans(text)
    if strings is None:
        return None
    # The header ends before the first indented line under which `pass` completes it.
    wrap = "if 1:\n" if indent else ""
    body_indent, body_start, tries = "", -1, 0
    for m in _INDENTED.finditer(text):
        if len(m.group(1)) <= len(indent) or _in_spans(strings, m.start(1)):
            continue
        tries += 1
        if tries > _HEADER_TRIES:
            return None
        try:
            got = ast.parse(f"{wrap}{text[: m.start(1)]}{m.group(1)}pass").body
        except SyntaxError:
            continue
        if wrap and len(got) == 1 and isinstance(got[0], ast.If):
            got = got[0].body
        if not (
            len(got) == 1
            and isinstance(got[0], _DEFS)
            and len(got[0].body) == 1
            and isinstance(got[0].body[0], ast.Pass)
        ):
            return None
        body_indent, body_start = m.group(1), m.start(1)
        break
    if body_start < 0:
        return None
    # a start at or left of the statement's own indentation: the range holds more than it
    out = _OUTER.get(len(indent))
    if out is None:
        out = _OUTER[len(indent)] = re.compile(
            r"\n[ \t]{0,%d}(?=[A-Za-z_@\[({'\"0-9.\-~])" % len(indent)
        )
    for m in out.finditer(text, body_start):
        if not _in_spans(strings, m.start() + 1):
            return None
    rx = _MEMBER.get(body_indent)
    if rx is None:
        rx = _MEMBER[body_indent] = re.compile(
            "\n"
            + re.escape(body_indent)
            + r"(?=[A-Za-z_@\[({'\"0-9.\-~])(?!(?:else|elif|except|finally)\b)"
        )
    starts: list[int] = []
    line, last_pos, prev_deco, depth = first + text.count("\n", 0, body_start), body_start, False, 0
    for m in rx.finditer(text, body_start - 1):
        pos = m.start() + 1
        if _in_spans(strings, pos):
            continue
        line += text.count("\n", last_pos, pos)
        depth += _depth(text[last_pos:pos])
        last_pos = pos
        deco = prev_deco
        prev_deco = text.startswith("@", m.end())
        # inside open brackets (as counted, strings and comments included: an unbalanced one
        # only merges pieces) or after a line that ends open, this line continues a statement
        if deco or depth or (starts and _open_before(lines, line, starts[-1])):
            continue
        starts.append(line)
    if not starts:
        return None
    mark = len(regions)
    regions.append((first, starts[0] - 1))
    chk = _Check(first, len(body_indent), [], [])
    for i, a in enumerate(starts):
        b = starts[i + 1] - 1 if i + 1 < len(starts) else last
        j = bisect.bisect_left(hits, a)
        if i + 1 < len(starts) and not (j < len(hits) and hits[j] <= b):
            continue
        chk.starts.append(a)
        if b - a >= SPLIT_MIN_LINES and _DEF_START_STR.match(lines[a - 1], len(body_indent)):
            sub = _plan_def(lines, a, b, body_indent, hits, regions)
            if sub is not None:
                chk.children.append(sub)
                continue
        regions.append((a, b))
    if len(regions) == mark + 1:
        del regions[mark:]
        return None
    return chk


def _depth(s: str) -> int:
    return s.count("(") + s.count("[") + s.count("{") - s.count(")") - s.count("]") - s.count("}")


def _open_before(lines: list[str], line: int, floor: int) -> bool:
    """Does the last code line before ``line`` (not before ``floor``) end open (a backslash, a
    bracket, a comma, an operator) or carry a comment (which could hide an open end)? A boundary
    not taken merely keeps two statements together."""
    for k in range(line - 2, floor - 2, -1):
        s = lines[k].strip()
        if s and not s.startswith("#"):
            if "#" in s:
                code, _, _ = s.partition("#")
                if "'" in code or '"' in code:  # the '#' may sit in a string
                    return True
                s = code
            return _OPEN_END.search(s) is not None
    return False


def _hit_lines(data: bytes, low: bytes, aliases: Sequence[str] = ()) -> list[int]:
    """Sorted 1-based line numbers holding a CUDA token or an alias name."""
    found = _token_lines(low)
    if aliases:
        rx = re.compile(rb"\b(?:" + b"|".join(re.escape(a.encode()) for a in aliases) + rb")\b")
        found += _lines_matching(rx, data)
        return sorted(set(found))
    return found


def _token_lines(low: bytes) -> list[int]:
    """Sorted 1-based numbers of the lines holding a token: ``bytes.find`` per token and hit
    line (a C substring search; a regex alternation scans the bytes several times slower)."""
    starts: list[int] = []
    find = low.find
    for tok in TOKENS:
        pos = find(tok)
        while pos >= 0:
            starts.append(pos)
            eol = find(b"\n", pos)
            if eol < 0:
                break
            pos = find(tok, eol)
    if not starts:
        return []
    starts.sort()
    found: list[int] = []
    line, last, count = 1, 0, low.count
    for pos in starts:
        line += count(b"\n", last, pos)
        last = pos
        if not found or found[-1] != line:
            found.append(line)
    return found


def _lines_matching(rx: re.Pattern, data: bytes) -> list[int]:
    """Sorted 1-based numbers of the lines where ``rx`` matches; one search per such line."""
    found: list[int] = []
    line, last = 1, 0
    search, count, find = rx.search, data.count, data.find
    m = search(data)
    while m is not None:
        pos = m.start()
        line += count(b"\n", last, pos)
        found.append(line)
        last = find(b"\n", pos)
        if last < 0:
            break
        m = search(data, last)
    return found


def _decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        head = b"\n".join(data.split(b"\n", 2)[:2])
        m = re.search(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", head, re.M)
        if m is None:
            raise
        try:
            return data.decode(m.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            raise UnicodeDecodeError(
                "utf-8", data, 0, 1, "undecodable with its coding cookie"
            ) from None


# --------------------------------------------------------------------------------- entry point
def scan_source(
    data: bytes,
    relpath: str,
    rules: Sequence[Rule],
    *,
    package_prefix: str = "",
    segments: bool = True,
) -> tuple[list[Finding], list[FileError]]:
    """Findings and per-file errors for one Python file; never raises for bad input.

    ``segments=False`` forces a whole-file parse (tests compare both strategies).
    """
    plan = _plan(rules)
    low = data.lower()
    if not any(t in low for t in TOKENS):
        return [], []
    if b"\r" in data:  # ast counts \r\n and lone \r as line breaks; so do we
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        low = data.lower()
    try:
        text = _decode(data)
    except UnicodeDecodeError as e:
        return [], [
            FileError(
                relpath, "encoding", f"not UTF-8 (byte {e.start}) and no usable coding cookie"
            )
        ]
    if "\0" in text:
        return [], [FileError(relpath, "binary", "NUL byte in source")]
    lines = text.split("\n")
    qual = package_prefix + relpath
    package = package_name(relpath, package_prefix)
    hits = _hit_lines(data, low)
    segs = _segments(data) if segments and len(data) >= SEGMENT_MIN_BYTES else None
    scan = _Scan(plan, lines, hits, package)
    try:
        roots = None
        if segs is not None:  # imports first: aliases decide which other pieces matter
            first = _import_segments(data, segs)
            roots = _parse_segments(data, [segs[i] for i in first], lines)
        if roots is None:
            segs = None
            roots = ast.parse(text).body
        _module_imports(scan, roots)
        aliases = _cuda_aliases(scan.imports)
        if aliases:
            scan.hits = hits = _hit_lines(data, low, aliases)
        if segs is not None:
            taken = set(first)
            rest = [
                s
                for i, s in enumerate(segs)
                if i not in taken
                and (j := bisect.bisect_left(hits, s[0])) < len(hits)
                and hits[j] <= s[1]
            ]
            more = _parse_segments(data, rest, lines, hits)
            # the pieces of both parses are disjoint; the visitor wants them in source order
            roots = ast.parse(text).body if more is None else sorted(roots + more, key=_start)
    except SyntaxError as e:
        return [], [FileError(relpath, "syntax", f"line {e.lineno}: {e.msg}")]
    except (RecursionError, MemoryError, ValueError) as e:
        return [], [FileError(relpath, "syntax", f"cannot parse: {type(e).__name__}")]
    try:
        scan.run(roots)
    except RecursionError:
        return [], [FileError(relpath, "syntax", "nesting too deep")]
    return _findings(scan, relpath, qual, lines, text), []


def _module_imports(scan: _Scan, roots: Sequence[ast.stmt]) -> None:
    """Record every module-level import, however deep in if/try/with/for/while/match blocks
    (``if TYPE_CHECKING:``, ``try: ... except ImportError:``); class and def bodies have their
    own scope and are left out."""
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            scan.add_import(n)
        elif not isinstance(n, _DEFS):
            kids = [k for f in _BLOCKS for k in getattr(n, f, None) or () if isinstance(k, ast.AST)]
            stack.extend(reversed(kids))


_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")  # in source order


def _cuda_aliases(imports: dict[str, str]) -> list[str]:
    """Local names bound to CUDA things whose own spelling carries no CUDA token."""
    return [
        k
        for k, v in imports.items()
        if k != v
        and any(t in v.lower() for t in ("cuda", "cudnn", "nccl"))
        and not any(t in k.lower() for t in ("cuda", "cudnn", "nccl", "multigpu"))
    ]


def _col(lines: list[str], line: int, off: int) -> int:
    """1-based character column from ast's UTF-8 byte offset."""
    s = lines[line - 1] if 0 < line <= len(lines) else ""
    if s.isascii():
        return off + 1
    return len(s.encode()[:off].decode("utf-8", "ignore")) + 1


def _findings(scan: _Scan, relpath: str, qual: str, lines: list[str], text: str) -> list[Finding]:
    sub = subsystem(qual)
    items: list[tuple[Rule, int, int, int, int, str, str]] = []
    for rule, node, matched, kind in scan.out:
        items.append(
            (
                rule,
                node.lineno,
                node.col_offset,
                node.end_lineno,
                node.end_col_offset,
                matched,
                kind,
            )
        )
    for rule, l1, c1, l2, c2, matched in scan.spans:
        items.append((rule, l1, c1, l2, c2, matched, rule.kind))
    # Branches: a candidate whose test holds a predicate match.
    preds = sorted(
        (l1, c1, l2, c2) for r, l1, c1, l2, c2, _, _ in items if r.id in scan.p.predicates
    )
    if preds and scan.branch_cands:
        for kind, node, tests, start in scan.branch_cands:
            for t in tests:
                i = bisect.bisect_left(preds, (t.lineno, t.col_offset, 0, 0))
                if i < len(preds) and (preds[i][0], preds[i][1]) <= (
                    t.end_lineno,
                    t.end_col_offset,
                ):
                    line, col = (
                        (t.lineno, t.col_offset)
                        if kind == "decorator"
                        else (start.lineno, start.col_offset)
                    )
                    items.append(
                        (
                            scan.p.branches[kind],
                            line,
                            col,
                            node.end_lineno,
                            node.end_col_offset,
                            kind,
                            "branch",
                        )
                    )
                    break
    sup = suppressed_lines(text)
    out = []
    seen = set()
    for rule, l1, c1, l2, c2, matched, kind in items:
        key = (rule.id, l1, c1)
        if key in seen or (sup and is_suppressed(sup, l1, rule)):
            continue
        seen.add(key)
        rep = rule.replacement
        if rep and "{name}" in rep:
            rep = rep.replace("{name}", matched.rsplit(".", 1)[-1])
        msg = f"{rule.title}: " + (f"use {rep}" if rep else "no neutral equivalent, review by hand")
        out.append(
            Finding(
                rule.id,
                rule.name,
                rule.category,
                kind,
                relpath,
                l1,
                _col(lines, l1, c1),
                l2,
                _col(lines, l2, c2),
                lines[l1 - 1].strip() if l1 <= len(lines) else "",
                sub,
                msg,
                rep,
                rule.safety,
            )
        )
    return out
