"""Intent analysis: is the code around a finding about CUDA itself? The gate every family uses.

A neutral rewrite is right only where the code means "the accelerator", not "CUDA". This module
answers that from the file's ``ast`` alone (no libcst, nothing of ``patches`` but the file
context), so the audit's messages can reuse it. Each reason is a named ``Evidence`` kind:

- ``cuda-owned-path``: the file (or function) implements CUDA support itself (data:
  ``cuda_intent.toml`` ``[[owned]]``: ``torch/cuda/``, ``torch/backends/cudnn/``, CUDA codegen...);
- ``cuda-function``: an enclosing function or class is named for CUDA, or its docstring is about
  CUDA (``has_cuda_pallas``, "Checks for a full Pallas-on-CUDA environment");
- ``cuda-name``: the value flows into a name that says CUDA (``cuda_available_str = str(...)``,
  ``has_cuda = ...``, ``f(use_cuda=...)``, ``{"cuda": ...}``);
- ``cuda-statement``: the rest of the site's own statement stays CUDA (``current_stream(f"cuda:{i}")``,
  ``torch.cuda.current_stream().cuda_stream`` while ``.cuda_stream`` stays);
- ``cuda-guarded`` / ``cuda-chain`` / ``cuda-loop`` / ``cuda-comprehension``: the code the site
  guards (``if`` body, ``IfExp`` branch, decorated test, the rest of the block after an early
  ``if not ...: return``), the other operands of its boolean chain, the body of the loop or the
  comprehension it iterates over still use CUDA-only APIs or values;
- ``cuda-flow``: the value is assigned to a name that a later statement hands to CUDA-only code
  (``n = torch.cuda.device_count()`` ... ``torch.cuda.get_device_capability(i)``), or returned
  by a function whose same-file callers do (``range(_gpu_count())`` over a helper that asks
  ``get_device_properties``);
- ``cuda-branch``: the site is in a branch only CUDA reaches (``if x.is_cuda:``,
  ``device.type == "cuda"``, ``@onlyCUDA``): the rewrite is moot noise;
- ``cuda-state``: it sets the current device or stream (``[state]``) and the code after it in
  the same block stays CUDA (``torch.cuda.set_device(rank)`` then ``model.cuda(rank)``), also one
  call away (``self._make_model()`` whose body calls ``.cuda()``);
- ``cuda-timeline``: an event, stream or synchronize (``[timeline]``) in a block whose other
  statements call CUDA-only code (``torch.cuda._sleep`` timed between the events);
- ``cuda-comment``: a comment line in the statement or right above it is about CUDA ("the cuSolver
  backend returns V^H", "also makes sure this is CUDA or HIP");
- ``cuda-check``: an explicit device-type comparison (``x.device.type == "cuda"``) in a tree whose
  code handles each backend itself (``[checks]``: PyTorch's own);
- ``redundant`` (not about CUDA): the rename would repeat the statement right before it
  (``torch.manual_seed(s)`` then ``torch.cuda.manual_seed(s)``); the line is to be deleted;
- ``unguarded`` (not about CUDA, about safety): a ``guard: true`` rule (``empty_cache``: a no-op
  without CUDA, the neutral one raises) with no availability check around the site.

"Still CUDA" means a CUDA token (an identifier, attribute or space-free string matching
``[markers]``: ``cuda``, ``cudnn``, ``nccl``, ``nvtx``, ``jiterator``, ``tf32``, ...) or a finding
that this run does not fix. Tokens that a fixed finding covers (its rewrite removes them) do not
count. Consistency follows: a site is left when what shares its unit stays CUDA, so a unit becomes
neutral as a whole or not at all; ``Gate.settle`` iterates that to a fixed point.

API (one ``Gate`` per file, built by ``codemods._File`` for every family's sites)::

    gate = Gate(ctx, findings, candidates, companions)   # candidates: {(rule, line)}
    left = gate.settle(failed)        # {(rule, line): [Evidence, ...]}; failed: sites a family
                                      # could not rewrite (they stay CUDA too)
    gate.fixes(rule, line)            # the decision for one site
    Intent(ctx).evidence(finding, remaining)   # the raw evidence for one finding

A family's own ``companions`` (spans it rewrites together with a site, e.g. HN101's device-pick
literal) count as fixed with that site.
"""

from __future__ import annotations

import ast
import bisect
import fnmatch
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import tomllib

CUDA_DEVICE_STR = re.compile(r"cuda(?::(\d+))?")

Pos = tuple[int, int]  # (line 1-based, column 0-based)
Span = tuple[Pos, Pos]
Site = tuple[str, int]  # (rule, line)

KINDS = {
    "cuda-owned-path": "the file implements CUDA support itself",
    "cuda-function": "the enclosing function or class is about CUDA",
    "cuda-name": "the value flows into a name that says CUDA",
    "cuda-statement": "the rest of the statement stays CUDA-specific",
    "cuda-guarded": "the code it guards stays CUDA-specific",
    "cuda-chain": "the rest of the boolean chain stays CUDA-specific",
    "cuda-loop": "the loop body stays CUDA-specific",
    "cuda-comprehension": "the comprehension stays CUDA-specific",
    "cuda-flow": "the value is handed to CUDA-specific code",
    "cuda-branch": "only CUDA reaches this branch (moot)",
    "cuda-state": "the device or stream it sets is used by code that stays CUDA-specific",
    "cuda-timeline": "an event, stream or synchronize in a block whose other calls stay "
    "CUDA-specific on the same timeline",
    "cuda-comment": "the comment at the site is about CUDA",
    "cuda-check": "an explicit device-type check in code that handles each backend itself",
    "self-implementation": "the file defines the neutral replacement itself: the rewrite would "
    "call back into its own caller",
    "redundant": "the rewrite would repeat the statement before it: the line is to be "
    "deleted by hand",
    "unguarded": "the neutral API raises without an accelerator where CUDA's did not, and "
    "nothing checks for one first",
}


@dataclass(frozen=True)
class Evidence:
    kind: str  # a key of KINDS
    line: int  # where the evidence is
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@functools.lru_cache(maxsize=1)
def _data() -> dict:
    return tomllib.loads(Path(__file__).with_name("cuda_intent.toml").read_text())


@functools.lru_cache(maxsize=1)
def _marker() -> re.Pattern:
    return re.compile("|".join(_data()["markers"]["words"]), re.IGNORECASE)


def is_cuda_word(text: str) -> bool:
    """An identifier / attribute / device-like string that names something CUDA-only."""
    return bool(_marker().search(text))


def about_cuda_text(doc: str) -> bool:
    """A docstring's first paragraph is about CUDA (mentions it, names no neutral device)."""
    head = doc.strip().split("\n\n")[0].lower()
    return is_cuda_word(head) and not any(w in head for w in _data()["markers"]["neutral_words"])


def owned(path: str) -> list[tuple[str, list[str]]]:
    """The ``[[owned]]`` entries that cover ``path``: (path prefix, function patterns or [])."""
    path = path.replace("\\", "/")
    out = []
    for e in _data()["owned"]:
        p = e["path"]
        if path == p or (p.endswith("/") and (path.startswith(p) or f"/{p}" in f"/{path}")):
            out.append((p, list(e.get("functions", []))))
        elif not p.endswith("/") and (path.endswith("/" + p)):
            out.append((p, list(e.get("functions", []))))
    return out


def _tree_path(ctx) -> str:
    """The file's path as its module names it (``torch/cuda/__init__.py`` also when the scanned
    root is the ``torch`` package itself), else its path."""
    mod = getattr(ctx, "module_name", "")
    if not mod:
        return ctx.path
    tail = "/__init__.py" if ctx.path.endswith("__init__.py") else ".py"
    return mod.replace(".", "/") + tail


def is_call(ctx, node: ast.AST, name: str) -> bool:
    """``node`` is a call of the qualified ``name`` through the file's imports."""
    return isinstance(node, ast.Call) and _qualified(ctx, node.func) == name


def _qualified(ctx, node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ctx.qualify(node.lineno, ".".join([node.id, *reversed(parts)]))


def cuda_literal(ctx, node: ast.AST) -> str | None:
    """``"cuda"``/``"cuda:N"`` -> "str"; ``torch.device("cuda"[, N])``/``torch.device("cuda:N")``
    -> "device"; anything else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "str" if CUDA_DEVICE_STR.fullmatch(node.value) else None
    if is_call(ctx, node, "torch.device") and not node.keywords and 1 <= len(node.args) <= 2:
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            return None
        m = CUDA_DEVICE_STR.fullmatch(first.value)
        if m and (
            len(node.args) == 1
            or (
                m.group(1) is None
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, int)
            )
        ):
            return "device"
    return None


def span_of(nodes) -> Span:
    nodes = nodes if isinstance(nodes, list) else [nodes]
    return (nodes[0].lineno, nodes[0].col_offset), (nodes[-1].end_lineno, nodes[-1].end_col_offset)


def finding_span(f) -> Span:
    return (f.line, f.col - 1), (f.end_line, f.end_col - 1)


def _inside(inner: Span, outer: Span) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


@dataclass(frozen=True)
class Token:
    span: Span
    text: str
    node: ast.AST | None = None


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


class Intent:
    """Per-file facts: parents, CUDA tokens, the node at a finding."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.parents: dict[ast.AST, ast.AST] = {}
        self.at: dict[Span, ast.AST] = {}
        tokens: list[Token] = []
        for node in ast.walk(ctx.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        for node in ast.walk(ctx.tree):
            if not hasattr(node, "end_lineno") or isinstance(node, ast.stmt):
                continue
            self.at[span_of(node)] = node
            text = None
            if isinstance(node, ast.Name):
                text = node.id
            elif isinstance(node, ast.Attribute):
                text = node.attr
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                # a device-like string, or the message of a raise/assert/return (a skip
                # decorator's message is not: "CUDA not available" there names the gate)
                text = node.value
                if any(c.isspace() for c in text) and not self._message(node):
                    text = None
            elif isinstance(node, ast.arg):
                text = node.arg
            elif isinstance(node, ast.alias):  # `from torch._inductor import cudagraph_trees`
                text = node.name
            elif isinstance(node, ast.keyword):
                text = node.arg
            if text and is_cuda_word(text):
                tokens.append(Token(span_of(node), "", node))
        tokens.sort(key=lambda t: t.span)
        self._calls = self._local_calls(ctx.tree)
        # spans of findings with a neutral form whose rule this run does not select (safe
        # fixes only): not CUDA-only work (Gate fills it)
        self.unselected: set[Span] = set()
        self.comments = _comments(ctx.source)
        self.tokens = tokens
        self._starts = [t.span[0] for t in tokens]

    def _message(self, node) -> bool:
        n = self.parents.get(node)
        while n is not None and not isinstance(n, ast.stmt):
            n = self.parents.get(n)
        return isinstance(n, (ast.Raise, ast.Assert, ast.Return))

    def show(self, node: ast.AST) -> str:
        """A short text for a CUDA token: its whole dotted name (``torch.cuda.get_device_capability``)."""
        if isinstance(node, (ast.arg, ast.keyword)):
            return f"{node.arg}="
        while isinstance(self.parents.get(node), ast.Attribute):
            node = self.parents[node]
        text = ast.unparse(node)
        return text if len(text) <= 60 else text[:57] + "..."

    def tokens_in(self, span: Span) -> Iterable[Token]:
        i = bisect.bisect_left(self._starts, span[0])
        while i < len(self.tokens) and self.tokens[i].span[0] <= span[1]:
            t = self.tokens[i]
            if t.span[1] <= span[1]:
                yield t
            i += 1

    def node_of(self, f) -> ast.AST | None:
        """The expression a finding is about (a call finding's func -> the call)."""
        node = self.at.get(finding_span(f))
        if node is None:
            return None
        parent = self.parents.get(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return parent
        return node

    def evidence(self, f, remaining: Callable[[Span, Span], list[str]]) -> list[Evidence]:
        """Why the site of finding ``f`` is about CUDA (empty: nothing says so).

        ``remaining(span, own)`` -> what stays CUDA inside ``span`` (excluding ``own``)."""
        out: list[Evidence] = []
        node = self.node_of(f)
        defs = self._defs(node) if node is not None else []
        for prefix, funcs in owned(_tree_path(self.ctx)):
            if not funcs:
                out.append(Evidence("cuda-owned-path", f.line, f"{prefix} implements CUDA"))
            else:
                hit = [d.name for d in defs if any(fnmatch.fnmatch(d.name, p) for p in funcs)]
                if hit:
                    out.append(
                        Evidence("cuda-owned-path", f.line, f"{hit[0]}() in {prefix} is CUDA's")
                    )
        if node is None:
            return out
        for d in defs:
            decorated = [
                a
                for dec in d.decorator_list
                if isinstance(dec, ast.Call)
                for a in [*dec.args, *(k.value for k in dec.keywords)]
            ]
            hits = [h for a in decorated for h in remaining(span_of(a), finding_span(f))]
            if hits:
                out.append(
                    Evidence("cuda-function", d.lineno, f"{d.name} is registered for {hits[0][1]}")
                )
                break
            if is_cuda_word(d.name):
                out.append(Evidence("cuda-function", d.lineno, f"inside {d.name}"))
                break
            doc = ast.get_docstring(d, clean=False)
            if doc and about_cuda_text(doc):
                line = doc.strip().split("\n")[0][:60]
                out.append(Evidence("cuda-function", d.lineno, f"{d.name}: {line!r}"))
                break
        own = finding_span(f)
        reach = self._reach(remaining)
        top, stmt = self._top(node)
        comment = self._comment(stmt)
        if comment:
            out.append(Evidence("cuda-comment", comment[0], repr(comment[1][:60])))
        if self._check(node):
            out.append(Evidence("cuda-check", f.line, "compares a device type with CUDA"))
        if _qualified(self.ctx, node.func if isinstance(node, ast.Call) else node) in _state():
            after = self._after(stmt)
            if after:  # also one call away: `set_device(rank)` then `self._model()` (.cuda())
                self._add(out, "cuda-state", reach(span_of(after), own))
        if _qualified(self.ctx, node.func if isinstance(node, ast.Call) else node) in _timeline():
            self._add(out, "cuda-timeline", self._timeline(stmt, remaining, own))
        name = self._target_name(node, stmt)
        if name:
            out.append(Evidence("cuda-name", node.lineno, f"flows into {name}"))
        for kind, spans in self._guarded(node, top, stmt):
            for sp in spans:
                self._add(out, kind, reach(sp, own))
        self._branch(out, node, remaining, own)
        self._flow(out, stmt, node, remaining, own)
        self._returned(out, stmt, node, defs, reach, own)
        if defs and _qualified(
            self.ctx, node.func if isinstance(node, ast.Call) else node
        ) in frozenset(_data()["queries"]["calls"]):
            body = [x for x in defs[0].body]
            for hit in remaining(span_of(body), own):
                if "cuda" in hit[1] and not hit[1].startswith("HN"):  # asks torch.cuda again
                    out.append(
                        Evidence(
                            "cuda-flow",
                            hit[0],
                            f"the same function asks CUDA about devices: {hit[1]} (line {hit[0]})",
                        )
                    )
                    break
        unit = span_of(stmt) if not _compound(stmt) else span_of(top)
        self._add(out, "cuda-statement", remaining(unit, own))
        seen, kept = set(), []
        for e in out:  # one entry per kind and per thing that stays CUDA
            key = e.detail if e.kind.startswith("cuda-") and "(line" in e.detail else e
            if e.kind in seen or key in seen:
                continue
            seen |= {e.kind, key}
            kept.append(e)
        return kept

    # -- one call away: a same-file function or method, resolved by name -----------------------
    def _local_calls(self, tree) -> list[tuple[Span, ast.Call, ast.AST]]:
        """(span, call, callee) for every call of a module-level function (``f(...)``) or of a
        method of the enclosing class (``self.f(...)``, ``cls.f(...)``) defined in this file."""
        funcs = {
            d.name: d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        out = []
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            callee = None
            if isinstance(node.func, ast.Name):
                callee = funcs.get(node.func.id)
            elif (
                isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("self", "cls")
            ):
                cls = next((d for d in self._defs(node) if isinstance(d, ast.ClassDef)), None)
                if cls is not None:
                    callee = next(
                        (
                            d
                            for d in cls.body
                            if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
                            and d.name == node.func.attr
                        ),
                        None,
                    )
            if callee is not None:
                out.append((span_of(node), node, callee))
        out.sort(key=lambda x: x[0])
        return out

    def _reach(self, remaining):
        """``remaining`` that also looks one call deep: the body of a same-file function or
        method called inside the span (not the one holding the site itself)."""

        def reach(sp: Span, own: Span) -> list[tuple[int, str]]:
            hits = remaining(sp, own)
            if hits:
                return hits
            for csp, call, callee in self._calls:
                if csp[0] > sp[1]:
                    break
                if not _inside(csp, sp) or _inside(own, span_of(callee)):
                    continue
                h = remaining(span_of(callee.body), own)
                if h:
                    return [(call.lineno, f"{callee.name}() uses {h[0][1]} (line {h[0][0]})")]
            return []

        return reach

    def _timeline(self, stmt, remaining, own) -> list[tuple[int, str]]:
        """A ``torch.cuda.*`` call this run leaves in another statement of the same block: work
        that stays CUDA's on the timeline an event, stream or synchronize of the block orders
        (events around ``torch.cuda._sleep(...)``). Only calls count, not names (``cuda_time``);
        a model placed elsewhere in the function (``model.cuda(rank)``) does not: the sync of
        the current device is what the code means on any accelerator."""
        for sub in self._block_of(stmt) or []:
            if sub is stmt:
                continue
            for c in ast.walk(sub):
                if not isinstance(c, ast.Call):
                    continue
                name = _qualified(self.ctx, c.func) or ""
                if name.startswith("torch.cuda."):
                    if span_of(c.func) in self.unselected:
                        continue  # it has a neutral form, this run does not select its rule
                    hits = remaining(span_of(c.func), own)
                    if hits:
                        return hits
        return []

    def _returned(self, out, stmt, node, defs, reach, own) -> None:
        """``return <site>`` (the whole value) of a same-file function whose callers hand the
        value to CUDA-only code: ``range(_gpu_count())`` over ``get_device_properties``."""
        if not (isinstance(stmt, ast.Return) and stmt.value is node and defs):
            return
        fn = defs[0]
        if isinstance(fn, ast.ClassDef):
            return
        for _csp, call, callee in self._calls:
            if callee is not fn:
                continue
            ctop, cstmt = self._top(call)
            spans = [sp for _k, sps in self._guarded(call, ctop, cstmt) for sp in sps]
            if isinstance(cstmt, ast.Assign) and cstmt.value is call:
                spans.append(span_of(self._after(cstmt) or [cstmt]))
            for sp in spans:
                hits = reach(sp, own)
                if hits:
                    line, what = hits[0]
                    out.append(
                        Evidence(
                            "cuda-flow",
                            line,
                            f"returned by {fn.name}() to the call at line {call.lineno}: {what}",
                        )
                    )
                    return

    def unit(self, f) -> list[Span]:
        """The spans whose rewrites only work together with ``f``'s: its own statement (the
        header of a compound one) and the code it guards or iterates over (an ``if``/``IfExp``
        body, the rest of an ``and`` chain, the block after an ``assert`` or an early exit, a
        loop body). ``Gate.units`` puts the sites inside one patch."""
        node = self.node_of(f)
        if node is None:
            return [finding_span(f)]
        top, stmt = self._top(node)
        spans = [span_of(stmt) if not _compound(stmt) else span_of(top)]
        for _kind, sps in self._guarded(node, top, stmt):
            spans += sps
        return spans

    def _comment(self, stmt) -> tuple[int, str] | None:
        """A comment line inside the statement's header, or in the block right above it, about
        CUDA (trailing comments are tags more often than explanations: not read)."""
        if not hasattr(stmt, "lineno"):
            return None
        first = stmt.lineno
        hdr_end = stmt.body[0].lineno - 1 if _compound(stmt) and stmt.body else stmt.end_lineno
        lines = list(range(first, hdr_end + 1))
        above = first - 1
        while above in self.comments and self.comments[above][1]:
            lines.append(above)
            above -= 1
        for ln in sorted(lines):
            text, alone = self.comments.get(ln, ("", False))
            if text and alone and about_cuda_text(text):  # not a trailing `# tag`
                return ln, text
        return None

    def _check(self, node) -> bool:
        """``node`` is (in) a device-type comparison with a CUDA string, in a ``[checks]`` tree."""
        path = _tree_path(self.ctx)
        if not any(path.startswith(p) for p in _data()["checks"]["deliberate"]):
            return False
        n = node
        while n is not None and not isinstance(n, ast.stmt):
            if isinstance(n, ast.Compare):
                parts = [n.left, *n.comparators]
                return any(
                    isinstance(x, ast.Constant)
                    and isinstance(x.value, str)
                    and CUDA_DEVICE_STR.fullmatch(x.value)
                    for x in parts
                )
            n = self.parents.get(n)
        return False

    @staticmethod
    def _add(out, kind, hits) -> None:
        if hits:
            line, what = hits[0]
            out.append(Evidence(kind, line, f"{what} (line {line})"))

    # -- structure ----------------------------------------------------------------------------
    def _defs(self, node) -> list[ast.AST]:
        out, n = [], node
        while n is not None:
            p = self.parents.get(n)
            if isinstance(p, _DEFS) and n in p.body:
                out.append(p)
            n = p
        return out

    def _top(self, node) -> tuple[ast.AST, ast.stmt]:
        """(the outermost expression holding ``node`` below its statement, the statement)."""
        n, top = node, node
        while True:
            p = self.parents.get(n)
            if p is None or isinstance(p, ast.stmt):
                return top, p if p is not None else n
            n = p
            if hasattr(n, "end_lineno"):
                top = n

    def _target_name(self, node, stmt) -> str:
        """A CUDA-saying name the value of ``node`` flows into (assignment target, keyword,
        dict key), climbing through the expressions that carry the value."""
        n = node
        while True:
            p = self.parents.get(n)
            if p is None or isinstance(p, ast.stmt):
                break
            if isinstance(p, ast.keyword) and p.arg and is_cuda_word(p.arg):
                return p.arg
            if isinstance(p, ast.Dict) and n in p.values:
                key = p.keys[p.values.index(n)]
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    if is_cuda_word(key.value):
                        return repr(key.value)
            if isinstance(p, (ast.Lambda, *_COMPS)) or isinstance(p, ast.comprehension):
                break
            n = p
        targets = []
        if isinstance(stmt, ast.Assign) and stmt.value is n:
            targets = stmt.targets
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is n:
            targets = [stmt.target]
        elif isinstance(stmt, ast.Return) and stmt.value is n:
            return ""
        for t in targets:
            for sub in ast.walk(t):
                text = getattr(sub, "id", None) or getattr(sub, "attr", None)
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    text = sub.value
                if text and is_cuda_word(text):
                    return text
        return ""

    def _guarded(self, node, top, stmt):
        """(kind, spans) of the code the site guards or iterates over."""
        out = []
        n, negated = node, False
        while True:
            p = self.parents.get(n)
            if isinstance(p, ast.BoolOp):
                rest = [v for v in p.values if v is not n]
                if rest:
                    out.append(("cuda-chain", [span_of(v) for v in rest]))
            elif isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
                negated = not negated
            elif isinstance(p, ast.Compare) or (isinstance(p, ast.Call) and n is not p.func):
                pass  # `device_count() > 1`, `bool(P)`, `range(device_count())`
            elif isinstance(p, ast.IfExp) and p.test is n:
                out.append(("cuda-guarded", [span_of(p.orelse if negated else p.body)]))
                break
            elif isinstance(p, (ast.If, ast.While)) and p.test is n:
                # the whole dispatch: a branch that names another backend makes it deliberate
                blocks = [b for b in (p.body, p.orelse) if b]
                out.append(("cuda-guarded", [span_of(b) for b in blocks]))
                if isinstance(p, ast.If) and (_exits(p.body) or _exits(p.orelse)):
                    after = self._after(p)
                    if after:
                        out.append(("cuda-guarded", [span_of(after)]))
                break
            elif isinstance(p, ast.Assert) and p.test is n:
                after = self._after(p)  # `assert torch.cuda.is_available()` guards what follows
                if after:
                    out.append(("cuda-guarded", [span_of(after)]))
                break
            elif isinstance(p, ast.For) and p.iter is n:
                out.append(("cuda-loop", [span_of(p.body + p.orelse)]))
                break
            elif isinstance(p, ast.comprehension) and p.iter is n:
                comp = self.parents.get(p)
                parts = [getattr(comp, a) for a in ("elt", "key", "value") if hasattr(comp, a)]
                parts += [c for g in comp.generators for c in g.ifs]
                out.append(("cuda-comprehension", [span_of(x) for x in parts]))
                break
            elif isinstance(p, ast.Call) and n is p.func:
                pass
            elif isinstance(p, _DEFS) and n in p.decorator_list:
                out.append(("cuda-guarded", [span_of(p.body)]))
                break
            else:
                break
            n = p
        # `@skipIf(not P, ...)` / `@skipUnless(P, ...)`: the decorated definition.
        dec = self.parents.get(top)
        if isinstance(dec, _DEFS) and top in dec.decorator_list and isinstance(top, ast.Call):
            out.append(("cuda-guarded", [span_of(dec.body)]))
        return out

    def checked(self, f) -> bool:
        """An availability check guards the site: an enclosing test, an earlier operand of its
        ``and`` chain, or an earlier ``if not ...: return`` of its block names ``is_available``
        (or a ``TEST_*`` gate)."""
        n = self.node_of(f)

        def checks(test) -> bool:
            return any(
                (isinstance(x, ast.Attribute) and x.attr == "is_available")
                or (isinstance(x, ast.Name) and x.id.startswith("TEST_"))
                for x in ast.walk(test)
            )

        while n is not None:
            p = self.parents.get(n)
            if isinstance(p, (ast.If, ast.While, ast.IfExp)) and n is not p.test and checks(p.test):
                return True
            if isinstance(p, ast.BoolOp) and any(checks(v) for v in p.values[: p.values.index(n)]):
                return True
            if isinstance(n, ast.stmt):
                block = self._block_of(n) or []
                for prev in block[: block.index(n)] if n in block else []:
                    if isinstance(prev, ast.If) and _exits(prev.body) and checks(prev.test):
                        return True
            n = p
        return False

    def _block_of(self, stmt) -> list | None:
        p = self.parents.get(stmt)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(p, field, None)
            if isinstance(block, list) and stmt in block:
                return block
        return None

    def _after(self, stmt) -> list[ast.stmt]:
        p = self.parents.get(stmt)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(p, field, None)
            if isinstance(block, list) and stmt in block:
                return block[block.index(stmt) + 1 :]
        return []

    def _branch(self, out, node, remaining, own) -> None:
        """Moot: an enclosing condition (or decorator) that only CUDA passes."""
        n = node
        while True:
            p = self.parents.get(n)
            if p is None:
                return
            tests = []
            if isinstance(p, (ast.If, ast.While, ast.IfExp)) and n is not p.test:
                tests = [p.test]  # either side of a test that stays CUDA is about CUDA
            elif isinstance(p, ast.BoolOp) and isinstance(p.op, ast.And):
                tests = [v for v in p.values[: p.values.index(n)] if not _negative(v)]
            elif isinstance(p, _DEFS) and n in p.body:
                tests = [d for d in p.decorator_list if _cuda_only_decorator(d)]
            # an earlier `if not <CUDA>: return/raise` of the same block: only CUDA gets here
            block = self._block_of(n)
            if block is not None and isinstance(n, ast.stmt):
                for prev in block[: block.index(n)]:
                    if isinstance(prev, ast.If) and _exits(prev.body) and _negative(prev.test):
                        tests.append(prev.test)
            for t in tests:
                hits = remaining(span_of(t), own)
                if hits:
                    self._add(out, "cuda-branch", hits)
                    return
            n = p

    def _flow(self, out, stmt, node, remaining, own) -> None:
        """``x = <site>`` and a later statement of the same scope hands ``x`` to CUDA-only code
        (an argument of a call that stays CUDA, a CUDA-only attribute of it, or the iterable of
        a loop whose body stays CUDA)."""
        if not isinstance(stmt, ast.Assign):
            return
        # the value itself, or a call inside it (`n = torch.cuda.device_count() if ... else 8`)
        if stmt.value is not node and not (
            isinstance(node, ast.Call) and any(x is node for x in ast.walk(stmt.value))
        ):
            return
        names = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        if not names:
            return
        scope = self.ctx.scope_at(stmt.lineno)
        for sub in ast.walk(scope.node):
            if not (
                isinstance(sub, ast.Name)
                and sub.id in names
                and isinstance(sub.ctx, ast.Load)
                and sub.lineno > stmt.end_lineno
                and self.ctx.scope_at(sub.lineno) is scope
            ):
                continue
            user = self._top(sub)[1]  # a compound statement: all of it (the body uses it)
            hits = remaining(span_of(user), own)
            if hits:
                self._add(out, "cuda-flow", hits)
                return
            n = sub
            while not isinstance(n, ast.stmt):
                p = self.parents.get(n)
                hits = []
                if isinstance(p, ast.Call) and n is not p.func:
                    hits = remaining(span_of(p.func), own)
                elif isinstance(p, ast.Attribute) and n is p.value:
                    hits = remaining(span_of(p), own)  # `s.cuda_stream` while it stays
                elif isinstance(p, ast.For) and n is p.iter:
                    hits = remaining(span_of(p.body), own)
                if hits:
                    self._add(out, "cuda-flow", hits)
                    return
                if p is None:
                    break
                n = p


def _comments(source: str) -> dict[int, tuple[str, bool]]:
    """line -> (comment text, whether the line holds nothing but the comment)."""
    import io
    import tokenize

    out: dict[int, tuple[str, bool]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                alone = not tok.line[: tok.start[1]].strip()
                out[tok.start[0]] = (tok.string.lstrip("#").strip(), alone)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


@functools.lru_cache(maxsize=1)
def _state() -> frozenset[str]:
    return frozenset(_data()["state"]["calls"])


@functools.lru_cache(maxsize=1)
def _timeline() -> frozenset[str]:
    return frozenset(_data()["timeline"]["calls"])


def _compound(stmt) -> bool:
    return isinstance(
        stmt,
        (
            ast.If,
            ast.For,
            ast.AsyncFor,
            ast.While,
            ast.With,
            ast.AsyncWith,
            ast.Try,
            ast.FunctionDef,
            ast.AsyncFunctionDef,
            ast.ClassDef,
            ast.Match,
        ),
    )


def _exits(block) -> bool:
    last = block[-1] if block else None
    if isinstance(last, _EXITS):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        f = last.value.func
        name = getattr(f, "attr", None) or getattr(f, "id", "")
        return "skip" in name.lower() or name in ("exit", "fail")
    return False


def _negative(test) -> bool:
    """``not X`` / ``X != "cuda"`` / ``X is not ...``: the CUDA side is the other branch."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return (
        isinstance(test, ast.Compare)
        and all(isinstance(o, (ast.NotEq, ast.IsNot, ast.NotIn)) for o in test.ops)
        # `torch.version.cuda is not None` asks "is this CUDA": the positive side
        and not all(
            isinstance(c, ast.Constant) and c.value in (None, False) for c in test.comparators
        )
    )


_ONLY = re.compile(r"only.*cuda|requires?_?cuda|needs?_?cuda|skip_?unless|skipif", re.IGNORECASE)


def _cuda_only_decorator(dec) -> bool:
    """``@onlyCUDA``, ``@requires_cuda``, ``@skipIf(not <cuda>)``, ``@skipUnless(<cuda>)``."""
    f = dec.func if isinstance(dec, ast.Call) else dec
    name = getattr(f, "attr", None) or getattr(f, "id", "")
    if name in ("skipIf",):
        return isinstance(dec, ast.Call) and bool(dec.args) and _negative(dec.args[0])
    return bool(_ONLY.search(name))


class Gate:
    """The decision for every candidate site of one file (see the module docstring)."""

    def __init__(
        self,
        ctx,
        findings,
        candidates: set[Site],
        companions=None,
        unguarded=frozenset(),
        defined_in: dict[str, dict[str, str]] | None = None,
        renames: dict[str, str] | None = None,
    ) -> None:
        self.intent = Intent(ctx)
        self.renames = renames or {}  # a call family's old name -> new name
        self.intent.unselected = {
            finding_span(f)
            for f in findings
            if (f.rule, f.line) not in candidates and f.safety != "manual" and f.replacement
        }
        self.unguarded = set(unguarded)  # rules whose plain rewrite needs an availability check
        # rule -> {file defining a replacement (tree path): the replacement's name}
        self.defined_in = defined_in or {}
        self.findings = [f for f in findings if f.kind != "branch"]
        self.candidates = set(candidates)
        self.companions: dict[Site, list[Span]] = companions or {}
        self.left: dict[Site, list[Evidence]] = {}
        self._by_line: dict[int, list] = {}
        for f in self.findings:
            self._by_line.setdefault(f.line, []).append(f)

    def fixes(self, rule: str, line: int) -> bool:
        return (rule, line) in self.candidates and (rule, line) not in self.left

    def settle(self, failed: Iterable[Site] = ()) -> dict[Site, list[Evidence]]:
        """Iterate to the least fixed point: a site is left when evidence remains with every
        site not left counted as fixed; ``failed`` sites (a family could not rewrite them) stay
        CUDA too."""
        failed = set(failed)
        left: dict[Site, list[Evidence]] = dict(self.left)
        for _ in range(20):
            # a line left only for redundancy (to be deleted) or safety (`unguarded`: its neutral
            # form raises without an accelerator) is not about CUDA: it keeps no other site CUDA
            gone = {
                k
                for k, ev in left.items()
                if ev and all(e.kind in ("redundant", "unguarded") for e in ev)
            }
            fixed = (self.candidates - set(left) - failed) | gone
            spans = self._fixed_spans(fixed)
            new = dict(left)
            for f in self.findings:
                site = (f.rule, f.line)
                if site not in self.candidates or site in new or site in failed:
                    continue
                ev = self.intent.evidence(f, self._remaining(spans, fixed, f))
                here = self.defined_in.get(f.rule, {}).get(_tree_path(self.intent.ctx))
                if here:
                    ev.append(Evidence("self-implementation", f.line, f"this file defines {here}"))
                if not ev:
                    ev = self._redundant(f)
                if not ev and f.rule in self.unguarded and not self.intent.checked(f):
                    ev = [Evidence("unguarded", f.line, "no is_available() check around it")]
                if ev:
                    new[site] = ev
            if new.keys() == left.keys():
                break
            left = new
        self.left = left
        return left

    def _redundant(self, f) -> list[Evidence]:
        """``torch.manual_seed(s)`` then ``torch.cuda.manual_seed(s)``: the rename would repeat
        the statement right before it (which already does it for every device); the line is
        to be deleted, not rewritten."""
        it = self.intent
        node = it.node_of(f)
        stmt = it.parents.get(node)
        if not (isinstance(node, ast.Call) and isinstance(stmt, ast.Expr)):
            return []
        new = self.renames.get(_qualified(it.ctx, node.func) or "")
        block = it._block_of(stmt) or []
        i = block.index(stmt) if stmt in block else 0
        prev = block[i - 1] if i > 0 else None
        if not (
            new
            and isinstance(prev, ast.Expr)
            and isinstance(prev.value, ast.Call)
            and _qualified(it.ctx, prev.value.func) == new
            and ast.dump(ast.Tuple(prev.value.args)) == ast.dump(ast.Tuple(node.args))
            and ast.dump(ast.Tuple([k.value for k in prev.value.keywords]))
            == ast.dump(ast.Tuple([k.value for k in node.keywords]))
        ):
            return []
        return [
            Evidence(
                "redundant",
                prev.lineno,
                f"the line before already calls {new}() with the same arguments: delete this one",
            )
        ]

    def units(self) -> list[set[Site]]:
        """The sites this run rewrites, joined when one lies in the other's ``Intent.unit`` (a
        guard and the query it guards, two calls of one statement): each set must land in one
        patch, or a prefix of the series holds a half-neutral unit (``torch.cuda.device_count()
        if torch.accelerator.is_available() else 8``)."""
        fixed = [f for f in self.findings if self.fixes(f.rule, f.line)]
        parent: dict[Site, Site] = {(f.rule, f.line): (f.rule, f.line) for f in fixed}

        def root(x: Site) -> Site:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for f in fixed:
            spans = self.intent.unit(f)
            for g in fixed:
                if g is not f and any(_inside(finding_span(g), sp) for sp in spans):
                    parent[root((g.rule, g.line))] = root((f.rule, f.line))
        out: dict[Site, set[Site]] = {}
        for x in parent:
            out.setdefault(root(x), set()).add(x)
        return [u for u in out.values() if len(u) > 1]

    def _fixed_spans(self, fixed: set[Site]) -> dict[int, list[Span]]:
        out: dict[int, list[Span]] = {}
        for f in self.findings:
            if (f.rule, f.line) in fixed:
                sp = finding_span(f)
                out.setdefault(sp[0][0], []).append(sp)
        for site, sps in self.companions.items():
            if site in fixed:
                for sp in sps:
                    out.setdefault(sp[0][0], []).append(sp)
        return out

    def _remaining(self, spans, fixed, me):
        mine = (me.rule, me.line)
        own_extra = self.companions.get(mine, [])

        def covered(sp: Span) -> bool:
            for line in range(max(1, sp[0][0] - 20), sp[0][0] + 1):
                for fs in spans.get(line, ()):
                    if _inside(sp, fs):
                        return True
            return any(_inside(sp, c) for c in own_extra)

        def remaining(unit: Span, own: Span) -> list[tuple[int, str]]:
            hits = []
            for t in self.intent.tokens_in(unit):
                if _inside(t.span, own) or covered(t.span):
                    continue
                hits.append((t.span[0][0], self.intent.show(t.node)))
                break
            for line in range(unit[0][0], unit[1][0] + 1):
                for f in self._by_line.get(line, ()):
                    sp = finding_span(f)
                    if (f.rule, f.line) in fixed or (f.rule, f.line) == mine or covered(sp):
                        continue
                    if _inside(sp, unit) and not _inside(sp, own):
                        node = self.intent.at.get(sp)
                        what = self.intent.show(node) if node is not None else f.source.strip()
                        hits.append((f.line, f"{f.rule} {what[:60]}"))
                        break
            return sorted(hits)

        return remaining
