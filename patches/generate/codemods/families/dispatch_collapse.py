"""A per-device dispatch that makes the same call on each backend's module -> the one call of
``torch.accelerator`` (HN104 ``set_device`` in its CUDA arm), upstream's form (the DataLoader's
pin-memory thread, torch 2.4 -> 2.13)::

    if device == "cuda":
        torch.cuda.set_device(i)
    elif device == "xpu":                          ->    torch.accelerator.set_device_index(i)
        torch.xpu.set_device(i)
    elif device == torch._C._get_privateuse1_backend_name():
        getattr(torch, device).set_device(i)

Each arm tests one subject against a device name (CUDA's and at least one other backend's: the
chain enumerates accelerators), its body is that backend's module making the call (``torch.<b>.f``,
or ``getattr(torch, ...)`` bound to a name then called), the same ``f`` and the same arguments
everywhere, and there is no ``else``. ``torch.accelerator`` makes that call on whichever
accelerator the process has: the arm that matched before, since a process has one accelerator
type. Calls collapsed: ``ACCELERATOR`` (set the device, synchronize). The arms' tests are
companions of the CUDA call: the intent gate counts them fixed with it.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import statement
from patches.generate.intent import Span, span_of

FAMILY = "call"  # HN104's family: the CUDA arm's call
ACCELERATOR = {"set_device": "set_device_index", "synchronize": "synchronize"}
PRIVATEUSE1 = "torch._C._get_privateuse1_backend_name()"


@dataclass(frozen=True)
class Dispatch:
    start: int
    end: int
    cuda_line: int  # the CUDA arm's call
    call: str  # the accelerator call that replaces the chain, as written
    spans: tuple[Span, ...]  # the tests and the other arms: rewritten with the CUDA call


def _backend(test: ast.AST, subject: list) -> str | None:
    """The device name ``test`` compares the chain's subject with (``"privateuse1"`` for the
    out-of-tree backend's name); the first test fixes the subject."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(right, ast.Constant) and isinstance(right.value, str):
        name = right.value
    elif ast.unparse(right) == PRIVATEUSE1:
        name = "privateuse1"
    else:
        return None
    text = ast.unparse(left)
    if subject and subject[0] != text:
        return None
    subject[:] = [text]
    return name


def _arm_call(body: list[ast.stmt], backend: str) -> tuple[str, str] | None:
    """(function, arguments as written) of an arm that calls its backend's module once."""
    bound: set[str] = set()
    *setup, last = body
    for stmt in setup:  # `mod = getattr(torch, name)`
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and ast.unparse(stmt.value.func) == "getattr"
            and ast.unparse(stmt.value.args[0]) == "torch"
        ):
            return None
        bound.add(stmt.targets[0].id)
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        return None
    func = last.value.func
    if not isinstance(func, ast.Attribute):
        return None
    owner = ast.unparse(func.value)
    if backend == "privateuse1":
        ok = owner in bound or owner.startswith("getattr(torch,")
    else:
        ok = owner == f"torch.{backend}" and not setup
    if not ok:
        return None
    call = last.value
    args = ", ".join([ast.unparse(a) for a in call.args] + [ast.unparse(k) for k in call.keywords])
    return func.attr, args


def _dispatch(node: ast.If) -> Dispatch | None:
    subject: list = []
    arms, n = [], node
    while True:
        backend = _backend(n.test, subject)
        if backend is None:
            return None
        arms.append((backend, n))
        if not n.orelse:
            break
        if len(n.orelse) != 1 or not isinstance(n.orelse[0], ast.If):
            return None  # an else arm: the chain does not only enumerate accelerators
        n = n.orelse[0]
    names = [b for b, _ in arms]
    if "cuda" not in names or len(names) < 2 or len(set(names)) != len(names):
        return None
    calls = {_arm_call(a.body, b) for b, a in arms}
    if len(calls) != 1 or None in calls:
        return None
    (func, args) = next(iter(calls))
    if func not in ACCELERATOR:
        return None
    cuda_arm = next(a for b, a in arms if b == "cuda")
    spans = [span_of(a.test) for _b, a in arms]
    spans += [span_of(a.body) for b, a in arms if b != "cuda"]
    return Dispatch(
        node.lineno,
        node.end_lineno,
        cuda_arm.body[-1].lineno,
        f"torch.accelerator.{ACCELERATOR[func]}({args})",
        tuple(spans),
    )


@functools.lru_cache(maxsize=8)
def dispatches(ctx) -> dict[int, Dispatch]:
    """``if`` line -> the dispatch it starts (not the ``elif`` arms of another)."""
    inner = {
        id(n.orelse[0])
        for n in ctx.nodes
        if isinstance(n, ast.If) and len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)
    }
    out = {}
    for node in ctx.nodes:
        if isinstance(node, ast.If) and id(node) not in inner:
            d = _dispatch(node)
            if d is not None:
                out[d.start] = d
    return out


class DispatchCollapse(Family):
    name = "dispatch-collapse"
    serves = (FAMILY,)

    def _mine(self, ctx, lines):
        return [d for d in dispatches(ctx).values() if d.cuda_line in lines]

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        if spec.family != FAMILY:
            return lines
        mine = self._mine(ctx, lines)
        ctx.blocks.update((d.start, d.end) for d in mine)
        return lines | frozenset(ln for d in mine for ln in range(d.start, d.end + 1))

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        if spec.family != FAMILY:
            return {}
        return {(spec.rule, d.cuda_line): list(d.spans) for d in self._mine(ctx, lines)}

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.If):
            return None
        d = dispatches(eng.ctx).get(eng.line(original))
        if d is None or eng.end_line(original) != d.end:
            return None  # not a dispatch, or a header region rather than the block
        specs = [s for s, ls in eng.gated if s.family == FAMILY and d.cuda_line in ls]
        if not specs or not eng.fixes(specs[0].rule, d.cuda_line):
            return None
        # every other finding of the chain (the tests' HN505, ...) must be this run's to fix: a
        # safe-only run does not collapse a chain whose tests are review rules
        ours = {s.rule for s, ls in eng.gated}
        for f in eng.gate.findings if eng.gate is not None else ():
            if d.start <= f.line <= d.end and f.line != d.cuda_line:
                if f.rule not in ours or not eng.fixes(f.rule, f.line):
                    eng.fail(specs[0], original, f"{f.rule} in the chain is not fixed by this run")
                    return None
        eng.outcome.applied.append((specs[0].rule, d.cuda_line))
        for spec, lines in eng.gated:  # the tests' own findings (HN505, ...) go with it
            for ln in lines:
                if d.start <= ln <= d.end and ln != d.cuda_line and eng.fixes(spec.rule, ln):
                    eng.outcome.applied.append((spec.rule, ln))
        gone = set(eng.outcome.applied)
        eng.outcome.failed = [f for f in eng.outcome.failed if (f[0], f[1]) not in gone]
        eng.add_needed_import("torch", node=original)
        out = statement(eng, d.call + "\n")
        return out.with_changes(leading_lines=original.leading_lines)
