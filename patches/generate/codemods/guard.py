"""What a ``torch.cuda.is_available()`` guards, from the file's ``ast`` (HN101's safety check).

The neutral predicate answers "is there any accelerator", so the rewrite is right only when the
code it guards is neutral too. Two shapes are decided here:

* the device-pick idiom (upstream's own rewrite, pytorch/tutorials#3167): ``"cuda" if
  torch.cuda.is_available() else other`` and its ``if ...: d = "cuda" else: d = other`` form,
  where the CUDA literal is rewritten with the predicate (``PICK``);
* otherwise the guarded code's extent: the ``if`` body, the IfExp body, the rest of an ``and``
  chain, a ``@skipIf(not ...)``/``@skipUnless(...)`` definition's body. A finding the run leaves
  there keeps the predicate as it is (see ``blocked``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from patches.generate.codemods.context import FileContext

IS_AVAILABLE = "torch.cuda.is_available"
_CUDA_STR = re.compile(r"cuda(?::(\d+))?")

Pos = tuple[int, int]  # (line 1-based, column 0-based)
Span = tuple[Pos, Pos]


@dataclass
class Site:
    """One ``torch.cuda.is_available()`` call."""

    line: int
    col: int
    spans: list[Span] = field(default_factory=list)  # the code it guards
    picks: dict[int, str] = field(default_factory=dict)  # literal line -> kind ("str"/"device")


def _is_call(ctx: FileContext, node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    parts, f = [], node.func
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if not isinstance(f, ast.Name):
        return False
    dotted = ".".join([f.id, *reversed(parts)])
    return ctx.qualify(node.lineno, dotted) == name


def cuda_literal(ctx: FileContext, node: ast.AST) -> str | None:
    """``"cuda"``/``"cuda:N"`` -> "str"; ``torch.device("cuda"[, N])``/``torch.device("cuda:N")``
    -> "device"; anything else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "str" if _CUDA_STR.fullmatch(node.value) else None
    if _is_call(ctx, node, "torch.device") and not node.keywords and 1 <= len(node.args) <= 2:
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            return None
        m = _CUDA_STR.fullmatch(first.value)
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


def _span(nodes) -> Span:
    return (nodes[0].lineno, nodes[0].col_offset), (nodes[-1].end_lineno, nodes[-1].end_col_offset)


def _single_assign(stmts):
    if len(stmts) == 1 and isinstance(stmts[0], ast.Assign) and len(stmts[0].targets) == 1:
        return stmts[0]
    return None


def _pick_if(ctx: FileContext, node: ast.If) -> ast.Assign | None:
    """``if P: d = "cuda" else: d = other`` -> the ``d = "cuda"`` statement."""
    body, other = _single_assign(node.body), _single_assign(node.orelse)
    if body is None or other is None or cuda_literal(ctx, body.value) is None:
        return None
    if ast.dump(body.targets[0]) != ast.dump(other.targets[0]):
        return None
    return body


def _guarded(ctx: FileContext, node: ast.AST, parents: dict, site: Site) -> None:
    """Fill ``site`` for the expression ``node`` (the call, or an ``and``/``not`` around it)."""
    parent = parents.get(node)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        grand = parents.get(parent)
        # `@skipIf(not P, ...)`: the definition runs only when P holds.
        if _decorator_call(grand, parent, parents, "skipIf"):
            site.spans.append(_span(parents[grand].body))
        elif isinstance(grand, ast.If) and grand.test is parent and grand.orelse:
            site.spans.append(_span(grand.orelse))
        return
    if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
        rest = parent.values[parent.values.index(node) + 1 :]
        if rest:
            site.spans.append(_span(rest))
        _guarded(ctx, parent, parents, site)
        return
    if isinstance(parent, ast.IfExp) and parent.test is node:
        kind = cuda_literal(ctx, parent.body)
        if kind is not None and node is parent.test and isinstance(node, ast.Call):
            site.picks[parent.body.lineno] = kind
        else:
            site.spans.append(_span([parent.body]))
        return
    if isinstance(parent, (ast.If, ast.While)) and parent.test is node:
        assign = (
            _pick_if(ctx, parent)
            if isinstance(parent, ast.If) and isinstance(node, ast.Call)
            else None
        )
        if assign is not None:
            site.picks[assign.value.lineno] = cuda_literal(ctx, assign.value)
        else:
            site.spans.append(_span(parent.body))
        return
    if _decorator_call(parent, node, parents, "skipUnless"):
        site.spans.append(_span(parents[parent].body))


def _decorator_call(call, arg, parents: dict, name: str) -> bool:
    """``call`` is ``<...>.name(arg, ...)`` used as a decorator of a def or class."""
    if not isinstance(call, ast.Call) or not call.args or call.args[0] is not arg:
        return False
    f = call.func
    fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    owner = parents.get(call)
    return (
        fname == name
        and isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and call in owner.decorator_list
    )


def sites(ctx: FileContext) -> dict[int, list[Site]]:
    """line -> the ``torch.cuda.is_available()`` calls starting on it, with what they guard."""
    parents: dict[ast.AST, ast.AST] = {}
    calls = []
    for node in ast.walk(ctx.tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
        if (
            isinstance(node, ast.Call)
            and not node.args
            and not node.keywords
            and _is_call(ctx, node, IS_AVAILABLE)
        ):
            calls.append(node)
    out: dict[int, list[Site]] = {}
    for call in calls:
        site = Site(call.lineno, call.col_offset)
        _guarded(ctx, call, parents, site)
        out.setdefault(call.lineno, []).append(site)
    return out


def _inside(f, span: Span) -> bool:
    """The finding lies wholly inside ``span`` (finding columns are 1-based)."""
    (l1, c1), (l2, c2) = span
    start, end = (f.line, f.col - 1), (f.end_line, f.end_col - 1)
    return (l1, c1) <= start and end <= (l2, c2)


def blocked(all_sites: dict[int, list[Site]], unfixed) -> dict[int, str]:
    """line of an is_available() call -> why it stays: its guarded code holds ``unfixed``."""
    out: dict[int, str] = {}
    for line, ss in all_sites.items():
        for s in ss:
            hits = sorted(
                (f for f in unfixed for sp in s.spans if _inside(f, sp)),
                key=lambda f: (f.line, f.col),
            )
            if hits:
                h = hits[0]
                out[line] = (
                    f"guarded code is still CUDA-specific: {h.rule} at line {h.line}: {h.source}"
                )
    return out
