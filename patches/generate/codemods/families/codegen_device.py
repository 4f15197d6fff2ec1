"""A device check that guards generated source (HN504 ``x.is_cuda``), rewritten with the text it
writes: the generated code follows the tensor's own device, upstream's form (the repro
generators of ``torch/_dynamo/debug_utils.py``, torch 2.4 -> 2.13)::

    if buf.is_cuda:                         if buf.device.type != "cpu":
        s = f"{s}.cuda()"            ->         s = f'{s}.to("{buf.device}")'
    if p.is_cuda:                           if p.device.type != "cpu":
        extra = ', device="cuda"'    ->         extra = f', device="{p.device}"'

On a CUDA machine the check answers as before and the text names the same device ("cuda:0"
where ``.cuda()`` meant the current one, the device the tensor is on); elsewhere the generated
code places the tensor where it was, not on a CUDA device that may not exist. Only where every
string of the ``if`` body that names "cuda" is one of those two shapes (``.cuda()`` inside an
f-string's text, ``device="cuda"`` in a plain string), the check's subject is a name or an
attribute chain, and the ``if`` has no ``else``; any other text ("cuda" in a message, a
``.cuda(1)``) leaves the whole unit to ``device_checks`` (which leaves it: it writes "cuda").
The strings are companions of the check: the intent gate counts them fixed with it.
"""

from __future__ import annotations

import ast
import functools
import re

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.device_checks import ATTRIBUTE, device_type_compare
from patches.generate.codemods.families.idioms_common import (
    specs_at,
    string_unit_lines,
    string_unit_spans,
)

FAMILY = "device-checks"  # the catalogue's family for HN504, whose sites this one takes
_CUDA_TEXT = re.compile(r"\bcuda\b")
_METHOD = ".cuda()"
_KEYWORD = re.compile(r"""device=(["'])cuda\1""")


def _subject(test: ast.expr) -> ast.expr | None:
    """The ``x`` of the test's one ``x.is_cuda`` (alone or an operand of an ``and`` chain)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    found = [p.value for p in parts if isinstance(p, ast.Attribute) and p.attr == ATTRIBUTE]
    if len(found) != 1:
        return None
    node = found[0]
    probe = node
    while isinstance(probe, ast.Attribute):
        probe = probe.value
    return node if isinstance(probe, ast.Name) else None


def _strings(body: list[ast.stmt]) -> list[ast.expr] | None:
    """The string nodes of ``body`` that name "cuda" if each is a shape this family rewrites
    (an f-string whose text holds ``.cuda()`` and no other "cuda"; a plain string whose only
    "cuda" is ``device="cuda"``), else None."""
    out: list[ast.expr] = []
    inside: set[int] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.JoinedStr):
                texts = [v.value for v in node.values if isinstance(v, ast.Constant)]
                inside |= {id(v) for v in node.values}
                named = [t for t in texts if _CUDA_TEXT.search(t)]
                if not named:
                    continue
                if any(_CUDA_TEXT.search(t.replace(_METHOD, "")) for t in named):
                    return None
                out.append(node)
    for stmt in body:
        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            if id(node) in inside or not _CUDA_TEXT.search(node.value):
                continue
            if _CUDA_TEXT.search(_KEYWORD.sub("", node.value)) or not _KEYWORD.search(node.value):
                return None
            out.append(node)
    return out


@functools.lru_cache(maxsize=8)
def units(ctx) -> dict[int, tuple[str, list[ast.expr]]]:
    """test line -> (the check's subject as source, the strings it rewrites with it), for each
    ``if x.is_cuda:`` of the file whose body writes "cuda" only in the shapes above."""
    out: dict[int, tuple[str, list[ast.expr]]] = {}
    for node in ctx.nodes:
        if not isinstance(node, ast.If) or node.orelse or node.test.lineno != node.lineno:
            continue
        subject = _subject(node.test)
        if subject is None:
            continue
        strings = _strings(node.body)
        if not strings:
            continue
        out[node.test.lineno] = (ast.unparse(subject), strings)
    return out


def _string_owner(ctx, line: int) -> tuple[int, str] | None:
    """(the check's line, its subject) for a string of a unit on ``line``."""
    for test_line, (subject, strings) in units(ctx).items():
        if any(s.lineno <= line <= s.end_lineno for s in strings):
            return test_line, subject
    return None


def _formatted_text(text: str, subject: str) -> list[cst.BaseFormattedStringContent]:
    """``text`` with each ``.cuda()`` -> ``.to("{subject.device}")``, as f-string parts."""
    raw: list = []
    for i, piece in enumerate(text.split(_METHOD)):
        if i:
            raw += ['.to("', cst.parse_expression(f"{subject}.device"), '")']
        raw.append(piece)
    parts: list[cst.BaseFormattedStringContent] = []
    for item in raw:
        if not isinstance(item, str):
            parts.append(cst.FormattedStringExpression(expression=item))
        elif parts and isinstance(parts[-1], cst.FormattedStringText):
            parts[-1] = cst.FormattedStringText(parts[-1].value + item)
        elif item:
            parts.append(cst.FormattedStringText(item))
    return parts


class CodegenDevice(Family):
    name = "codegen-device"
    serves = (FAMILY,)

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        if spec.family != FAMILY:
            return lines
        return string_unit_lines(units(ctx), lines)

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        if spec.family != FAMILY:
            return {}
        return string_unit_spans(units(ctx), spec.rule, lines)

    def on_ref(self, eng, original, updated):
        if not isinstance(original, cst.Attribute) or original.attr.value != ATTRIBUTE:
            return None
        line = eng.line(original)
        if line not in units(eng.ctx):
            return None
        specs = specs_at(eng, original, FAMILY)
        if not specs:
            return None
        eng.done(specs[0], original)
        return device_type_compare(updated.value, "!=")

    def _owner(self, eng, node):
        """(spec, subject) where ``node`` is a string of a unit the gate lets through."""
        found = _string_owner(eng.ctx, eng.line(node))
        if found is None:
            return None
        test_line, subject = found
        specs = specs_at(eng, node, FAMILY)
        if not specs or not eng.fixes(specs[0].rule, test_line):
            return None
        return specs[0], subject

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.FormattedString):
            return None
        owner = self._owner(eng, original)
        if owner is None:
            return None
        _spec, subject = owner
        texts = [p.value for p in updated.parts if isinstance(p, cst.FormattedStringText)]
        if not any(_METHOD in t for t in texts):
            return None
        start, end = updated.start, updated.end
        if '"' in end:  # the new text quotes the device with "
            if any("'" in t for t in texts) or len(end) != 1:
                return None
            start, end = start.replace('"', "'"), "'"
        parts: list[cst.BaseFormattedStringContent] = []
        for p in updated.parts:
            if isinstance(p, cst.FormattedStringText) and _METHOD in p.value:
                parts += _formatted_text(p.value, subject)
            else:
                parts.append(p)
        return updated.with_changes(start=start, end=end, parts=parts)

    def on_literal(self, eng, original, updated):
        owner = self._owner(eng, original)
        if owner is None or updated.prefix:
            return None
        _spec, subject = owner
        quote = updated.quote
        body = updated.value[len(quote) : -len(quote)]
        if not _KEYWORD.search(body) or "{" in body or "}" in body:
            return None
        new = _KEYWORD.sub(lambda m: f"device={m.group(1)}{{{subject}.device}}{m.group(1)}", body)
        return cst.parse_expression(f"f{quote}{new}{quote}")
