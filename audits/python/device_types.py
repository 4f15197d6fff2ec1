"""A profiler event's device type checked against CUDA (``device_type_compare`` match type).

The profiler's events and memory records carry a ``DeviceType`` (``evt.device_type``,
``kineto_event.device_type()``); code that sums device time or device memory asks whether that
type is CUDA: ``evt.device_type == DeviceType.CUDA``, ``!=``, or membership in a literal list
that names CUDA (or HIP, CUDA's ROCm build) with at most ``PrivateUse1`` beside it
(``in [DeviceType.CUDA, DeviceType.PrivateUse1]``). XPU, MTIA and HPU kernels then count as
nothing. Reported at the CUDA member compared with, or at the whole list.

Only comparisons whose other side is a ``device_type`` (the catalogue's ``subject`` regex on
its text): ``DeviceType.CUDA`` passed as an argument (``has_multicast_support(DeviceType.CUDA,
0)``) names the device to act on, and a list that also names another accelerator or a host
type (``[DeviceType.CUDA, DeviceType.XPU]``, ``[DeviceType.CPU, DeviceType.CUDA]``) is already a
list of several backends: neither is reported. Whether the check dispatches to CUDA's own code
is the codemod's question (``patches/generate/codemods/families/profiler_devices.py``).
"""

from __future__ import annotations

import ast
from typing import Sequence

from audits.model import Rule
from audits.python.plan import DeviceTypeRule
from audits.python.strings import text_of
from audits.resolve import dotted_parts

_OPS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
_SEQS = (ast.List, ast.Tuple, ast.Set)


def member(scan, rule: DeviceTypeRule, node: ast.AST) -> str | None:
    """The member name (``CUDA``) when ``node`` is a member of the rule's DeviceType enum."""
    parts = dotted_parts(node) if isinstance(node, ast.Attribute) else None
    full = scan.resolve(parts, node) if parts else None
    if full is None or "." not in full:
        return None
    enum, name = full.rsplit(".", 1)
    return name if enum in rule.enums else None


def _cuda_side(
    scan, rule: DeviceTypeRule, op: ast.cmpop, node: ast.AST
) -> tuple[ast.AST, ast.AST] | None:
    """(the node to report, its first CUDA member): the member itself (``==``/``!=``), or a
    literal list of members naming one and nothing but the rule's ``beside`` members (``in``/
    ``not in``: the whole list is reported, every member of it is the check's)."""
    if isinstance(op, (ast.Eq, ast.NotEq)):
        return (node, node) if member(scan, rule, node) in rule.members else None
    if not isinstance(node, _SEQS) or not node.elts:
        return None
    names = [member(scan, rule, e) for e in node.elts]
    if any(n is None or (n not in rule.members and n not in rule.beside) for n in names):
        return None
    first = next((e for e, n in zip(node.elts, names) if n in rule.members), None)
    return (node, first) if first is not None else None


def device_type_compares(
    scan, rules: Sequence[DeviceTypeRule], node: ast.Compare
) -> list[tuple[Rule, ast.AST, str]]:
    """(rule, node to report, matched name) for each CUDA check of a device type in ``node``."""
    out = []
    left = node.left
    for op, right in zip(node.ops, node.comparators):
        if isinstance(op, _OPS):
            pairs = [(left, right)]
            if isinstance(op, (ast.Eq, ast.NotEq)):
                pairs.append((right, left))
            for rule in rules:
                for subject, other in pairs:
                    if not rule.subject.search(text_of(subject)):
                        continue
                    hit = _cuda_side(scan, rule, op, other)
                    if hit is not None:
                        out.append((rule.rule, hit[0], scan.resolve(dotted_parts(hit[1]), hit[1])))
                        break
        left = right
    return out
