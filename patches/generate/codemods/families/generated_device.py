"""The device of code a function writes as text (HN509 on ``torch.device("cuda...")`` inside an
f-string): the generated code follows the device the function holds, upstream's form (inductor's
comm-buffer allocation in ``wrapper.py``, torch 2.14 -> 2.15)::

    f'torch.device("cuda:{device.index}")'     ->  f'torch.device("{device.type}:{device.index}")'
    f'torch.device("cuda", {idx_expr()})'      ->  f'torch.device("{device.type}", {idx_expr()})'

On CUDA the text is the same ("cuda" is the device's type); on another device the generated code
allocates where the function's device is, not on a CUDA device that may not exist. Only in an
f-string (the text is already built from the function's values) and only where the function
holds a device: the name the f-string itself reads ``.index`` or ``.type`` of, else the one name
of the function whose ``.index`` or ``.type`` it reads and whose name says device (``device``,
``dev``, ``*_device``). A piece of an implicit concatenation is one (torch 2.13's
``f"{dtype}, " f'torch.device("cuda:{device.index}"), '``: the finding is the whole's). A plain
string, or a function with no device or two, keeps its text.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import specs_at

FAMILY = "device-defaults"  # HN509's family: the audit reports the code text as a device string
_CODE = re.compile(r"""(torch\.device\(\s*(["']))cuda(?=\2|:)""")
_FACETS = ("index", "type")


def _held(tree: ast.AST) -> set[str]:
    """Names whose ``.index`` / ``.type`` ``tree`` reads and whose name says device (``device``,
    ``dev``, ``*_device``)."""
    return {
        a.value.id
        for a in ast.walk(tree)
        if isinstance(a, ast.Attribute)
        and a.attr in _FACETS
        and isinstance(a.value, ast.Name)
        and (a.value.id in ("device", "dev") or a.value.id.endswith("_device"))
    }


class GeneratedDevice(Family):
    """``torch.device("cuda...")`` in a function's generated code -> the function's device."""

    name = "generated-device"

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.FormattedString):
            return None
        texts = [p for p in updated.parts if isinstance(p, cst.FormattedStringText)]
        if not any(_CODE.search(p.value) for p in texts):
            return None
        top = original  # a piece of an implicit concatenation: the finding is the whole's
        while isinstance(eng.parent(top), cst.ConcatenatedString):
            top = eng.parent(top)
        specs = specs_at(eng, top, FAMILY)
        if not specs:
            return None
        device = self._device(eng, original)
        if device is None:
            return None
        parts: list[cst.BaseFormattedStringContent] = []
        for p in updated.parts:
            if not isinstance(p, cst.FormattedStringText) or not _CODE.search(p.value):
                parts.append(p)
                continue
            pieces = _CODE.split(p.value)  # text, (prefix, quote, text)...
            parts.append(cst.FormattedStringText(pieces[0]))
            for i in range(1, len(pieces), 3):
                parts.append(cst.FormattedStringText(pieces[i]))
                parts.append(cst.FormattedStringExpression(cst.parse_expression(f"{device}.type")))
                parts.append(cst.FormattedStringText(pieces[i + 2]))
        eng.done(specs[0], top)
        return updated.with_changes(parts=[p for p in parts if not _empty(p)])

    def _device(self, eng, node) -> str | None:
        """The f-string's own device name, else the function's one; None for none or two."""
        text = cst.Module([]).code_for_node(node)
        own = {n for n in _held(ast.parse(text, mode="eval")) if eng.in_scope(node, n)}
        if own:
            return own.pop() if len(own) == 1 else None
        scope = eng.ctx.scope_at(eng.line(node))
        if not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        held = {n for n in _held(scope.node) if eng.in_scope(node, n)}
        return held.pop() if len(held) == 1 else None


def _empty(p) -> bool:
    return isinstance(p, cst.FormattedStringText) and not p.value
