"""A device-type check whose branch only repeats the device it tested (HN505 ``t == "cuda"`` with
HN509's ``"cuda"`` in its body): the branch says the tested device back, so it names that device
instead, and the test becomes "any accelerator" (``device_predicates``), upstream's form (the
partitioner's device probe, dynamo's ``Tensor.type()``, torch 2.4 -> 2.13)::

    if t.device.type == "cuda":          if t.device.type != "cpu":
        return "cuda"              ->        return t.device.type
    if self.device.type == "cuda":       if self.device.type != "cpu":
        name = f"torch.cuda.{n}"   ->        name = f"torch.{self.device.type}.{n}"

On a CUDA machine the test and the value are what they were; on another accelerator the branch
answers for that device instead of falling through to the CPU's answer. Only where every string
of the ``if`` body that names "cuda" is the device's name itself (``"cuda"``) or its module in
text (``torch.cuda.`` in an f-string), and the tested value is a device type (``*.type``,
``*device_type``); any other CUDA text (``"cuda:0"``, a message, ``torch.cuda.`` outside an
f-string) leaves the unit as it was. The strings are companions of the test.
"""

from __future__ import annotations

import ast
import functools
import re

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import (
    specs_at,
    string_unit_lines,
    string_unit_spans,
    string_value,
)

TEST_FAMILY = "device-predicates"  # HN505's family: the test
STRING_FAMILY = "device-defaults"  # HN509's family: a plain "cuda" string
_CUDA_TEXT = re.compile(r"\bcuda\b")
_MODULE = "torch.cuda."


def _subject(test: ast.expr) -> ast.expr | None:
    """``S`` of ``S == "cuda"`` where ``S`` is a device type (``x.type``, ``device_type``)."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "cuda"
    ):
        return None
    s = test.left
    name = s.attr if isinstance(s, ast.Attribute) else s.id if isinstance(s, ast.Name) else ""
    if not (name == "type" or name.endswith("device_type")):
        return None
    probe = s
    while isinstance(probe, ast.Attribute):
        probe = probe.value
    return s if isinstance(probe, ast.Name) else None


def _strings(body: list[ast.stmt]) -> list[ast.expr] | None:
    """The strings of ``body`` naming "cuda", if each is the device's name returned or assigned
    (``return "cuda"``) or an f-string whose only "cuda" is ``torch.cuda.`` in its text; else
    None."""
    out: list[ast.expr] = []
    inside: set[int] = set()
    nodes = [n for stmt in body for n in ast.walk(stmt)]
    for node in nodes:
        if isinstance(node, ast.JoinedStr):
            texts = [v.value for v in node.values if isinstance(v, ast.Constant)]
            inside |= {id(v) for v in node.values}
            if not any(_CUDA_TEXT.search(t) for t in texts):
                continue
            if any(_CUDA_TEXT.search(t.replace(_MODULE, "")) for t in texts):
                return None
            out.append(node)
    echoed = {
        id(n.value)
        for n in nodes
        if isinstance(n, (ast.Return, ast.Assign)) and isinstance(n.value, ast.Constant)
    }
    for node in nodes:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in inside
        ):
            if node.value == "cuda" and id(node) in echoed:
                out.append(node)  # `return "cuda"`, `kind = "cuda"`: the device said back
            elif _CUDA_TEXT.search(node.value):
                return None
    return out


@functools.lru_cache(maxsize=8)
def units(ctx) -> dict[int, tuple[str, list[ast.expr]]]:
    """test line -> (the tested device type as source, the strings of the branch that echo it)."""
    out: dict[int, tuple[str, list[ast.expr]]] = {}
    for node in ctx.nodes:
        if not isinstance(node, ast.If) or node.test.lineno != node.test.end_lineno:
            continue
        subject = _subject(node.test)
        strings = _strings(node.body) if subject is not None else None
        if strings:
            out[node.test.lineno] = (ast.unparse(subject), strings)
    return out


class EchoDevice(Family):
    name = "echo-device"
    serves = (TEST_FAMILY,)

    def __init__(self) -> None:
        self.test_rules: set[str] = set()  # the rules of the tests (HN505), seen in prepare

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        if spec.family != TEST_FAMILY:
            return lines
        self.test_rules.add(spec.rule)
        return string_unit_lines(units(ctx), lines, keep=lambda s: isinstance(s, ast.JoinedStr))

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        if spec.family != TEST_FAMILY:
            return {}
        return string_unit_spans(units(ctx), spec.rule, lines)

    def _owner(self, eng, node) -> str | None:
        """The tested device type where ``node`` is a string of a unit whose test the gate
        lets through (HN505 at the test's line)."""
        line = eng.line(node)
        for test_line, (subject, strings) in units(eng.ctx).items():
            if any(s.lineno <= line <= s.end_lineno for s in strings):
                if any(eng.fixes(r, test_line) for r in self.test_rules):
                    return subject
        return None

    def _echo(self, eng, original, updated):
        if string_value(original) != "cuda" or isinstance(eng.parent(original), cst.Comparison):
            return None
        subject = self._owner(eng, original)
        if subject is None:
            return None
        spec = next(iter(specs_at(eng, original, STRING_FAMILY)), None)
        if spec is not None:
            eng.done(spec, original)
        return cst.parse_expression(subject)

    def _test(self, eng, original, updated):
        """The unit's test ``S == "cuda"`` -> ``S != "cpu"`` (rewritten here, with its strings,
        not left to a family that may decline it while the strings change)."""
        line = eng.line(original)
        if line not in units(eng.ctx) or not isinstance(eng.parent(original), cst.If):
            return None
        specs = specs_at(eng, original, TEST_FAMILY)
        if not specs or len(updated.comparisons) != 1:
            return None
        eng.done(specs[0], original)
        return updated.with_changes(
            comparisons=[
                updated.comparisons[0].with_changes(
                    operator=cst.NotEqual(
                        whitespace_before=cst.SimpleWhitespace(" "),
                        whitespace_after=cst.SimpleWhitespace(" "),
                    ),
                    comparator=cst.SimpleString('"cpu"'),
                )
            ]
        )

    def on_literal(self, eng, original, updated):
        if string_value(original) == "cuda" and isinstance(
            eng.parent(original), cst.ComparisonTarget
        ):
            if eng.line(original) in units(eng.ctx) and specs_at(eng, original, TEST_FAMILY):
                return updated  # the test's own "cuda": the whole comparison is rewritten below
        return self._echo(eng, original, updated)

    def on_node(self, eng, original, updated):
        if isinstance(original, cst.Comparison):
            return self._test(eng, original, updated)
        if not isinstance(original, cst.FormattedString):
            return None
        subject = self._owner(eng, original)
        if subject is None:
            return None
        parts: list[cst.BaseFormattedStringContent] = []
        changed = False
        for p in updated.parts:
            if isinstance(p, cst.FormattedStringText) and _MODULE in p.value:
                pieces = p.value.split(_MODULE)
                for i, piece in enumerate(pieces):
                    if i:
                        parts.append(cst.FormattedStringText("torch."))
                        parts.append(
                            cst.FormattedStringExpression(expression=cst.parse_expression(subject))
                        )
                        piece = "." + piece
                    parts.append(cst.FormattedStringText(piece))
                changed = True
            else:
                parts.append(p)
        if not changed:
            return None
        merged: list[cst.BaseFormattedStringContent] = []
        for p in parts:
            if isinstance(p, cst.FormattedStringText):
                if not p.value:
                    continue
                if merged and isinstance(merged[-1], cst.FormattedStringText):
                    merged[-1] = cst.FormattedStringText(merged[-1].value + p.value)
                    continue
            merged.append(p)
        return updated.with_changes(parts=merged)
