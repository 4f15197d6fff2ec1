"""One availability check for neighbouring guarded statements: two sibling blocks
``if torch.accelerator.is_available():`` (no ``else``, nothing but blank lines between them),
at least one written by the series, become one block. Different rules guard ``empty_cache()``
and ``reset_peak_memory_stats()`` (a ``flush()`` helper between benchmark runs), each in its own
patch; a maintainer writes the check once. The test asks a question nothing in the blocks can
change, so one check is the same as two. An ``else:`` holding nothing but such a check, written by
the series, becomes an ``elif`` (trl's ``else: torch.cuda.empty_cache()`` at the end of a
per-backend chain; pylint's ``else-if-used``). Applied to every step of a file (``plan``): a
later step starts from the merged text and keeps it.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from patches.generate.pytorch_style import changed_ranges

TESTS = frozenset({"torch.accelerator.is_available()", "torch.cuda.is_available()"})
_CODE = cst.Module([])


def merge(original: str, after: str) -> str:
    """``after`` with neighbouring guards merged where one of them is not in ``original``."""
    if after == original or not any(t in after for t in TESTS):
        return after
    new = {n for a, b in changed_ranges(original, after) for n in range(a, b + 1)}
    if not _mergeable(after, new):
        return after  # ``ast`` is ~30x faster than libcst's parse and positions: look first
    try:
        wrapper = MetadataWrapper(cst.parse_module(after))
    except cst.ParserSyntaxError:
        return after
    merged = wrapper.visit(_Merge(wrapper.resolve(PositionProvider), new))
    return merged.code


def _mergeable(text: str, new_lines: set[int]) -> bool:
    """Some block holds two sibling ``if <TEST>:`` statements with no ``else`` in a row, one of
    them starting on a written line, or some ``else:`` holds nothing but such a statement (not an
    ``elif``): what ``_Merge`` may join (it checks the rest)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    lines = text.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and len(node.orelse) == 1:
            inner = node.orelse[0]
            if _ast_guard(inner) and inner.lineno in new_lines:
                if lines[inner.lineno - 1].lstrip().startswith("if "):
                    return True
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for a, b in zip(block, block[1:]):
                if (
                    _ast_guard(a)
                    and _ast_guard(b)
                    and ast.unparse(a.test) == ast.unparse(b.test)
                    and (a.lineno in new_lines or b.lineno in new_lines)
                ):
                    return True
    return False


def _ast_guard(node) -> bool:
    return isinstance(node, ast.If) and not node.orelse and ast.unparse(node.test) in TESTS


class _Merge(cst.CSTTransformer):
    def __init__(self, positions, new_lines: set[int]) -> None:
        super().__init__()
        self.positions, self.new_lines = positions, new_lines

    def leave_IndentedBlock(self, original, updated):
        return updated.with_changes(body=self._merged(original.body, updated.body))

    def leave_If(self, original, updated):
        """``else:`` holding only a written guard -> ``elif``."""
        orelse = updated.orelse
        if not isinstance(orelse, cst.Else) or not isinstance(orelse.body, cst.IndentedBlock):
            return updated
        inner = orelse.body.body
        if len(inner) != 1 or not _guard(inner[0]) or orelse.body.header.comment:
            return updated
        if any(line.comment for line in (*orelse.leading_lines, *inner[0].leading_lines)):
            return updated
        if not self._written(original.orelse.body.body[0]):
            return updated
        return updated.with_changes(orelse=inner[0].with_changes(leading_lines=[]))

    def leave_Module(self, original, updated):
        return updated.with_changes(body=self._merged(original.body, updated.body))

    def _merged(self, old, body) -> list:
        out: list = []
        last_old = None
        for before, node in zip(old, body, strict=True):
            prev = out[-1] if out else None
            if (
                prev is not None
                and _guard(prev)
                and _guard(node)
                and _test(prev) == _test(node)
                and not any(line.comment for line in node.leading_lines)
                and (self._written(last_old) or self._written(before))
            ):
                block = prev.body.with_changes(body=[*prev.body.body, *node.body.body])
                out[-1] = prev.with_changes(body=block)
                continue
            out.append(node)
            last_old = before
        return out

    def _written(self, node) -> bool:
        return node is not None and self.positions[node].start.line in self.new_lines


def _guard(node) -> bool:
    return (
        isinstance(node, cst.If)
        and node.orelse is None
        and isinstance(node.body, cst.IndentedBlock)
        and _test(node) in TESTS
    )


def _test(node: cst.If) -> str:
    return _CODE.code_for_node(node.test.with_changes(lpar=[], rpar=[])).strip()
