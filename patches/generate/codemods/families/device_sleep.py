"""CUDA's spin kernel (HN114 ``torch.cuda._sleep(cycles)``) -> the same call of the module of the
device the code already holds, where that device is known not to be the CPU, upstream's form
(``get_cycles_per_ms(device)`` in ``common_utils``, torch 2.13 -> 2.14)::

    if device == "cpu":                          if device == "cpu":
        ...                                          ...
    else:                                  ->    else:
        torch.cuda._sleep(test_cycles)               torch.get_device_module(device)._sleep(test_cycles)

On CUDA the device is "cuda" there, so the call is the one it was; on another accelerator the
kernel runs on that device's queue, where the events and synchronizes around it (rewritten by
``Timing``/``GuardedSync`` once this site no longer stays CUDA: the gate's ``cuda-timeline``)
time it. ``torch.cpu`` has no ``_sleep``, ``torch.mps`` neither, and ``torch.xpu`` only from torch
2.14: the call is only as portable as the device's module, so it is rewritten only where the
device is not the CPU by the code's own test:

* the ``else`` of ``if D == "cpu":`` (or of ``if D != "cuda":``), the body of ``if D != "cpu":``,
  of ``if D == "cuda":`` (the check ``DevicePredicates``/``EchoDevice`` turn into ``!= "cpu"``)
  and of ``if D in ("cuda", "xpu"):``, a conjunct of an ``and`` test, and the rest of a block
  after ``if D == "cpu": return`` (or raise, continue, break);
* ``D`` a device or device type the function holds: a name like ``device``, ``dev``,
  ``device_type``, ``*_device``, ``*_device_type`` (``.type`` of one: ``device.type``,
  ``t.device.type``), resolved in the same scope at the test and at the call, not assigned
  again in between, and not an index (an ``int`` annotation or default).

Left: a ``_sleep`` with no device in scope (FSDP's test helpers: upstream kept them), or with a
device the code never tests against the CPU. A constant spin that is the whole body of an ``if``
in library code is a scheduling hint (symmetric memory's streams): ``sleep_hint`` issues it only
where CUDA is there, upstream's form.
"""

from __future__ import annotations

import ast
import functools
import re

import libcst as cst

from patches.generate.codemods.families import sleep_hint
from patches.generate.codemods.families.base import Family, is_int_param
from patches.generate.codemods.families.idioms_common import known_blocks

SLEEP = "torch.cuda._sleep"
_DEVICE_NAME = re.compile(r"(dev|device|dev_type|device_type|\w+_device|\w+_device_type)")


def _device_expr(node: ast.expr) -> ast.expr | None:
    """``node`` itself when it is a device (type): a device-named name, ``<device>.type``, or
    ``<x>.device`` / ``<x>.device.type``."""
    if isinstance(node, ast.Name):
        return node if _DEVICE_NAME.fullmatch(node.id) else None
    if isinstance(node, ast.Attribute) and node.attr == "type":
        return _device_expr(node.value)
    if isinstance(node, ast.Attribute) and node.attr == "device":
        probe = node.value
        while isinstance(probe, ast.Attribute):
            probe = probe.value
        return node if isinstance(probe, ast.Name) else None
    return None


def _strings(node: ast.expr) -> set[str] | None:
    """The device types a constant string or a tuple/list/set of them names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value.split(":")[0]}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        parts = [_strings(e) for e in node.elts]
        return set().union(*parts) if parts and all(p is not None for p in parts) else None
    return None


def _not_cpu(test: ast.expr, taken: bool) -> ast.expr | None:
    """The device a branch of ``test`` is known not to be the CPU for (``taken``: the body,
    else the ``else``), or None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _not_cpu(test.operand, not taken)
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And) == taken:  # every conjunct holds (or none does)
            return next((d for v in test.values if (d := _not_cpu(v, taken)) is not None), None)
        return None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    subject, names = _device_expr(test.left), _strings(test.comparators[0])
    if subject is None or not names:
        return None
    op = type(test.ops[0])
    equal = op in (ast.Eq, ast.In)
    if op not in (ast.Eq, ast.NotEq, ast.In, ast.NotIn):
        return None
    if equal == taken:  # the device is one of `names`
        return subject if "cpu" not in names else None
    return subject if names == {"cpu"} else None  # the device is none of `names`


@functools.lru_cache(maxsize=8)
def branches(tree: ast.Module) -> list[tuple[int, int, int, ast.expr]]:
    """(first line, last line, test line, device) of every block known not to run on the CPU."""
    return known_blocks(tree, _not_cpu)


def _root(node: ast.expr) -> ast.Name | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _assigned_between(ctx, name: str, start: int, end: int) -> bool:
    """``name`` is stored (assigned, a loop or ``with`` target) on a line in ``(start, end)``."""
    for node in ctx.nodes:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            if start < node.lineno < end:
                return True
    return False


def held_device(ctx, line: int) -> str | None:
    """The source of the device (type) that the code at ``line`` is known to hold and that is
    not the CPU, from the innermost branch holding ``line`` that says so; else None."""
    for first, last, test_line, device in sorted(branches(ctx.tree), key=lambda b: -b[0]):
        if not first <= line <= last:
            continue
        root = _root(device)
        if root is None:
            continue
        here, there = ctx.binding(line, root.id), ctx.binding(test_line, root.id)
        if here is None or there is None or here[0] is not there[0]:
            continue
        if is_int_param(ctx, line, root.id) or _assigned_between(ctx, root.id, test_line, line):
            continue
        if isinstance(device, ast.Attribute) and device.attr == "type":
            device = device.value  # the module of `device.type` is the module of `device`
        return ast.unparse(device)
    return None


class DeviceSleep(Family):
    name = "device-sleep"
    claims = (SLEEP,)

    def _hints(self, ctx, lines) -> dict[int, tuple[int, int]]:
        """``sleep_hint``'s ``if``s among ``lines``, where no device is held."""
        found = sleep_hint.hints(ctx, lines)
        return {ln: span for ln, span in found.items() if held_device(ctx, ln) is None}

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        spans = self._hints(ctx, lines).values()
        ctx.blocks.update(spans)
        return lines | frozenset(ln for a, b in spans for ln in range(a, b + 1))

    def on_node(self, eng, original, updated):
        if isinstance(original, cst.If):
            return sleep_hint.guard(eng, self.name, original, updated)
        return None

    def on_call(self, eng, original, updated):
        claimed = self.claimed(eng, original)
        if claimed is None:
            return None
        spec, _ = claimed
        device = held_device(eng.ctx, eng.line(original))
        if device is None and self._hints(eng.ctx, frozenset({eng.line(original)})):
            return None  # a scheduling hint: its ``if`` is rewritten whole (on_node)
        if device is None:
            eng.fail(
                spec,
                original,
                "no device in scope known not to be the CPU (torch.cpu has no _sleep)",
            )
            return None
        eng.remove_unused_import_by_node(original.func)
        eng.add_needed_import("torch", node=original)
        eng.done(spec, original)
        return updated.with_changes(
            func=cst.parse_expression(f"torch.get_device_module({device})._sleep")
        )
