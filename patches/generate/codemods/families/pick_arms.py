"""The accelerator pick over several backends with a CPU fallback, the pick of modern scripts
(PyTorch's Quickstart, pytorch/examples), in its expression and function forms::

    device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    ->  device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

    def get_device():                               def get_device():
        if torch.cuda.is_available():                   return <the same expression>
            return "cuda"
        if torch.backends.mps.is_available():  ->
            return "mps"
        return "cpu"

Each arm asks one backend (``torch.cuda``, ``torch.backends.mps`` / ``torch.mps``, ``torch.xpu``,
...: ``pick_block.OTHER_BACKENDS``) and gives that backend's type, in any order; the last value
is the CPU. ``current_accelerator()`` is the backend each arm named on its host (CUDA on a CUDA
machine, MPS on a Mac), so the pick gives what it gave on every host it served, and the
accelerator of the others. The values are strings or ``torch.device(...)``, all one kind, and the
neutral form keeps it (``pick_block.value_text``, the block form's writer). Not this shape: an arm
whose test or value is anything else (``"meta"``, ``"cuda:1"``, ``args.cpu``), a fallback that
is not the CPU, an arm that does more than give its value, no CUDA arm, a backend asked twice, one
backend besides CUDA's missing (``"cuda" if ... else "cpu"`` is ``guard``'s two-way pick).

The function form: a function whose body (after its docstring) is only the pick by returns,
``if``/``elif``/``else`` or ``if``s one after the other with the CPU's ``return`` last; the body
becomes one ``return``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patches.generate.codemods.families.pick_block import (
    IS_AVAILABLE,
    RETURN,
    Block,
    _other_backend,
    _result,
    _value,
)
from patches.generate.intent import Span, is_call, span_of


def _backend(ctx, test: ast.AST) -> str | None:
    """The device type an availability test asks for: "cuda" for ``torch.cuda.is_available()``."""
    if (
        isinstance(test, ast.Call)
        and not test.args
        and not test.keywords
        and is_call(ctx, test, IS_AVAILABLE)
    ):
        return "cuda"
    return _other_backend(ctx, test)


def pick(ctx, arms, last) -> tuple[str, ast.Call, list[Span]] | None:
    """``arms`` ([(test, value)]) then ``last`` as an accelerator pick: (its kind, the CUDA
    check, the spans the rewrite removes besides that check: the arms' values and the other
    backends' tests), or None."""
    if len(arms) < 2:
        return None
    kind, cuda, spans, seen = "", None, [], set()
    for test, value in arms:
        dev, v = _backend(ctx, test), _value(ctx, value)
        if dev is None or v is None or v[1] != dev or dev in seen or v[0] != (kind or v[0]):
            return None
        kind = v[0]
        seen.add(dev)
        if dev == "cuda":
            cuda = test
        else:
            spans.append(span_of(test))
        spans.append(span_of(value))
    if cuda is None or _value(ctx, last) != (kind, "cpu"):
        return None
    return kind, cuda, spans


@dataclass(frozen=True)
class Chain:
    """The expression form: ``"cuda" if torch.cuda.is_available() else "mps" if
    torch.backends.mps.is_available() else "cpu"`` (the quickstart tutorial's)."""

    call_line: int  # the is_available() call's line (HN101's site)
    kind: str  # "str" or "device"
    spans: tuple[Span, ...]
    arms: int  # how many conditionals the chain nests: the outermost holds them all


def if_arms(node) -> list:
    """The conditionals of an ``IfExp`` chain (``ast`` or ``libcst``), through its else values."""
    out = []
    while type(node).__name__ == "IfExp":
        out.append(node)
        node = node.orelse
    return out


def _chain(ctx, node: ast.IfExp) -> Chain | None:
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.IfExp) and parent.orelse is node and _backend(ctx, parent.test):
        return None  # an inner part of a longer chain
    exps = if_arms(node)
    found = pick(ctx, [(e.test, e.body) for e in exps], exps[-1].orelse)
    if found is None:
        return None
    kind, cuda, spans = found
    return Chain(cuda.lineno, kind, tuple(spans), len(exps))


def chains(ctx) -> dict[int, Chain]:
    """is_available() line -> the expression pick it tests."""
    found = [_chain(ctx, n) for n in ctx.nodes if isinstance(n, ast.IfExp)]
    return {c.call_line: c for c in found if c is not None}


def _return_arms(body: list[ast.stmt]) -> tuple[list, ast.AST] | None:
    """A function body of ``if`` arms that each return a value, then the last value: the
    ``else`` of the last chain or the closing ``return``."""
    arms: list = []
    for i, stmt in enumerate(body):
        if i == len(body) - 1 and isinstance(stmt, ast.Return) and stmt.value is not None:
            return arms, stmt.value
        node = stmt
        while isinstance(node, ast.If):
            got = _result(node.body)
            if got is None or got[0] != RETURN:
                return None
            arms.append((node.test, got[1]))
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                node = node.orelse[0]
            elif node.orelse:
                got = _result(node.orelse)
                ok = got is not None and got[0] == RETURN and i == len(body) - 1
                return (arms, got[1]) if ok else None
            else:
                break
        if not isinstance(stmt, ast.If):
            return None
    return None


def _function(ctx, fn) -> Block | None:
    body = fn.body
    if isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]  # the docstring stays
    shape = _return_arms(body) if body else None
    found = pick(ctx, *shape) if shape else None
    if found is None:
        return None
    kind, cuda, spans = found
    stmts = tuple((s.lineno, s.end_lineno) for s in body)
    start, end = body[0].lineno, body[-1].end_lineno
    return Block(start, end, RETURN, kind, True, tuple(spans), call=cuda.lineno, stmts=stmts)


def functions(ctx) -> dict[int, Block]:
    """call line -> the function-form pick (``Block``: its ``stmts`` are the function body's)."""
    out: dict[int, Block] = {}
    for node in ctx.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            b = _function(ctx, node)
            if b is not None:
                out[b.call_line] = b
    return out
