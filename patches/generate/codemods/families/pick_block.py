"""The device-pick block (HN101 with its HN502/HN503 literals), the most common idiom of training
scripts, rewritten as one unit::

    if torch.cuda.is_available():                   device = (
        device = "cuda"                                 torch.accelerator.current_accelerator().type
    elif torch.backends.mps.is_available():   ->        if torch.accelerator.is_available() else "cpu"
        device = "mps"                              )   # on one line
    else:
        device = "cpu"

``torch.accelerator.current_accelerator()`` is CUDA on a CUDA machine, MPS on a Mac, XPU on an
Intel GPU: the ``elif`` branches that only name another backend are what it already answers, so
they go. Shapes: ``if``/``elif``*/``else`` (one assignment) and, after ``device = "cpu"``,
``if``/``elif``* with no ``else`` (the accelerator branch alone stays). The values are strings
(``"cuda"``) or devices (``torch.device("cuda")``), each branch one assignment to the same
target. A branch doing anything else (``torch.mps.manual_seed``, a print) is backend-specific:
the block is not this shape, and its ``is_available()`` is left to the gate as before.

The expression form (``Chain``), ``"cuda" if torch.cuda.is_available() else "mps" if
torch.backends.mps.is_available() else "cpu"``, becomes the same expression.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patches.generate.intent import Span, cuda_literal, is_call, span_of

IS_AVAILABLE = "torch.cuda.is_available"
# Availability predicates of the other accelerators a block may name, and their device type.
OTHER_BACKENDS = {
    "torch.backends.mps.is_available": "mps",
    "torch.mps.is_available": "mps",
    "torch.xpu.is_available": "xpu",
    "torch.npu.is_available": "npu",
    "torch.hpu.is_available": "hpu",
    "torch.mtia.is_available": "mtia",
}


@dataclass(frozen=True)
class Block:
    start: int  # the `if` line
    end: int  # the block's last line
    target: str  # the assigned name, as written (`device`, `args.device`)
    kind: str  # "str" (device = "cuda") or "device" (device = torch.device("cuda"))
    has_else: bool  # False: `device = "cpu"` comes before and the block has no `else`
    spans: tuple[Span, ...]  # what the rewrite removes besides the `if` test: the other tests


def _value(ctx, node: ast.AST) -> tuple[str, str] | None:
    """``"x"`` -> ("str", "x"); ``torch.device("x")`` -> ("device", "x"); else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "str", node.value
    if (
        is_call(ctx, node, "torch.device")
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return "device", node.args[0].value
    return None


def _assign(stmts) -> ast.Assign | None:
    if len(stmts) == 1 and isinstance(stmts[0], ast.Assign) and len(stmts[0].targets) == 1:
        return stmts[0]
    return None


def _other_backend(ctx, test: ast.AST) -> str | None:
    """The device type an ``elif`` test asks for: ``torch.backends.mps.is_available()``, also
    behind ``hasattr(torch.backends, "mps") and ...``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) == 2:
        probe, test = test.values
        if not (isinstance(probe, ast.Call) and getattr(probe.func, "id", "") == "hasattr"):
            return None
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords):
        return None
    for name, dev in OTHER_BACKENDS.items():
        if is_call(ctx, test, name):
            return dev
    return None


def _preceded_by_cpu(ctx, node: ast.If, target: str) -> bool:
    """The statement right before ``node`` is ``<target> = "cpu"`` (or a cpu torch.device)."""
    for parent in ast.walk(ctx.tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list) and node in stmts:
                i = stmts.index(node)
                prev = _assign(stmts[i - 1 : i]) if i else None
                if prev is None or ast.unparse(prev.targets[0]) != target:
                    return False
                value = _value(ctx, prev.value)
                return value is not None and value[1] == "cpu"
    return False


def _block(ctx, node: ast.If) -> Block | None:
    test = node.test
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords):
        return None
    if not is_call(ctx, test, IS_AVAILABLE):
        return None
    first = _assign(node.body)
    if first is None or cuda_literal(ctx, first.value) is None:
        return None
    value = _value(ctx, first.value)
    if value is None or value[1] != "cuda":
        return None  # an index ("cuda:1") picks a device, not the accelerator
    target, kind = ast.unparse(first.targets[0]), value[0]
    spans: list[Span] = [span_of(first.value)]
    branch = node
    while len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If):
        branch = branch.orelse[0]
        dev, assign = _other_backend(ctx, branch.test), _assign(branch.body)
        if dev is None or assign is None or ast.unparse(assign.targets[0]) != target:
            return None
        if _value(ctx, assign.value) != (kind, dev):
            return None
        spans += [span_of(branch.test), span_of(assign.value)]
    if branch.orelse:
        last = _assign(branch.orelse)
        if last is None or ast.unparse(last.targets[0]) != target:
            return None
        if _value(ctx, last.value) != (kind, "cpu"):
            return None
        has_else = True
    else:
        if not _preceded_by_cpu(ctx, node, target):
            return None
        has_else = False
    return Block(node.lineno, node.end_lineno, target, kind, has_else, tuple(spans))


@dataclass(frozen=True)
class Chain:
    """The expression form: ``"cuda" if torch.cuda.is_available() else "mps" if
    torch.backends.mps.is_available() else "cpu"`` (the quickstart tutorial's)."""

    call_line: int  # the is_available() call's line (HN101's site)
    kind: str  # "str" or "device"
    spans: tuple[Span, ...]


def _chain(ctx, node: ast.IfExp) -> Chain | None:
    test = node.test
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords):
        return None
    value = _value(ctx, node.body)
    if not is_call(ctx, test, IS_AVAILABLE) or value is None or value[1] != "cuda":
        return None
    kind, spans, other, others = value[0], [span_of(node.body)], node.orelse, 0
    while isinstance(other, ast.IfExp):
        dev = _other_backend(ctx, other.test)
        if dev is None or _value(ctx, other.body) != (kind, dev):
            return None
        spans += [span_of(other.test), span_of(other.body)]
        other, others = other.orelse, others + 1
    if not others or _value(ctx, other) != (kind, "cpu"):
        return None  # a plain "cuda" if ... else "cpu" is AvailabilityGuard's literal pick
    return Chain(test.lineno, kind, tuple(spans))


def chains(ctx) -> dict[int, Chain]:
    """is_available() line -> the expression pick it tests."""
    found = [_chain(ctx, n) for n in ast.walk(ctx.tree) if isinstance(n, ast.IfExp)]
    return {c.call_line: c for c in found if c is not None}


def value_text(kind: str, current: str, api: bool) -> str:
    """The accelerator's device (``kind`` "device") or type, the CPU's without one."""
    if kind == "device":
        if api:
            return "torch.device(accelerator_api.device_type())"
        return 'torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")'
    if api:
        return "accelerator_api.device_type()"
    return f'{current} if torch.accelerator.is_available() else "cpu"'


def blocks(ctx) -> dict[int, Block]:
    """`if` line -> the device-pick block starting there."""
    out: dict[int, Block] = {}
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.If):
            b = _block(ctx, node)
            if b is not None:
                out[b.start] = b
    return out


def replacement(b: Block, current: str, api: bool) -> str:
    """The block's new text. ``current``: the accelerator's device type expression; ``api``: the
    accelerator_api target (``accelerator_api.device_type()`` is "cpu" without an
    accelerator)."""
    value = value_text(b.kind, current, api)
    if b.has_else or api:
        return f"{b.target} = {value}\n"
    # `device = "cpu"` stays above: only the accelerator's branch remains.
    inner = "current_accelerator()" if b.kind == "device" else "current_accelerator().type"
    return f"if torch.accelerator.is_available():\n    {b.target} = torch.accelerator.{inner}\n"
