"""Regions: the smallest statement-aligned pieces of a file that hold the findings.

Each finding line maps to the innermost statement holding it: a simple statement whole, or a
compound statement's header (decorators through the line before its body, given a ``pass``
body), else the whole compound statement. The region is parsed alone, wrapped in ``if 1:`` when
indented, so libcst sees a few lines instead of the file. Where a statement does not own its
lines (``a; b``) the next enclosing statement is used, and at the top the whole file.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from patches.generate.codemods.context import FileContext, stmt_start

_WRAP = "if 1:\n"


BIG = 200  # a statement longer than this (lines) is narrowed to the element holding a finding
_TAIL = re.compile(r"[\s,)\]}]*(#.*)?")


@dataclass(frozen=True)
class Region:
    start: int  # 1-based first line
    end: int  # 1-based last line (inclusive)
    header: bool = False  # a compound header: parsed with a `pass` body appended
    col: int = -1  # >= 0: an expression (a container element) from this column of `start`
    end_col: int = -1  # ... to this column of `end` (characters)

    def contains(self, other: "Region") -> bool:
        return self.start <= other.start and other.end <= self.end


class Piece:
    """The text libcst parses for a region, and how to put its rewrite back."""

    def __init__(self, lines: list[str], region: Region, whole_file: bool) -> None:
        self.region = region
        text = "".join(lines[region.start - 1 : region.end])
        self.original = text
        self.prefix = self.suffix = ""
        self.elif_ = False
        if whole_file:
            self.text, self.delta = text, 0
            return
        if region.col >= 0:
            # A container element that owns its lines: parsed as a parenthesized expression.
            self.head = lines[region.start - 1][: region.col]
            self.tail = lines[region.end - 1][region.end_col :]
            span = text[len(self.head) : len(text) - len(self.tail)]
            self.prefix, self.suffix = "(", ")\n"
            self.text, self.delta = f"({span})\n", region.start - 1
            return
        first = lines[region.start - 1]
        indent = first[: len(first) - len(first.lstrip(" \t"))]
        if first.lstrip(" \t").startswith("elif"):
            # An `elif` header alone is not a statement; parse it as `if` and restore it.
            self.elif_ = True
            text = indent + first.lstrip(" \t")[2:] + text[len(first) :]
        if region.header:
            if not text.endswith("\n"):
                text += "\n"
            self.suffix = indent + ("\t" if "\t" in indent else "    ") + "pass\n"
        if indent:
            self.prefix = _WRAP
        self.text = self.prefix + text + self.suffix
        self.delta = region.start - 1 - self.prefix.count("\n")

    def restore(self, code: str) -> str | None:
        """The region's new text from the rewritten piece; None if the wrapper did not survive."""
        if not (code.startswith(self.prefix) and code.endswith(self.suffix)):
            return None
        body = code[len(self.prefix) : len(code) - len(self.suffix)]
        if self.region.col >= 0:
            return self.head + body + self.tail
        if self.region.header and not self.original.endswith("\n"):
            body = body[:-1] if body.endswith("\n") else body
        if self.elif_:
            stripped = body.lstrip(" \t")
            lead = body[: len(body) - len(stripped)]
            if stripped.startswith("if"):
                return lead + "el" + stripped
            return None if self.region.header else _as_else(body, lead)
        return body


def _as_else(body: str, lead: str) -> str | None:
    """An ``elif`` chain's tail rewritten into plain statements becomes the chain's ``else``
    block (opencompass: ``elif cuda: b = "cuda" else: b = "cpu"`` collapsed to one line)."""
    lines = body.splitlines(keepends=True)
    if any(ln.strip() and not ln.startswith(lead) for ln in lines):
        return None
    unit = "\t" if "\t" in lead else "    "
    return (
        lead
        + "else:\n"
        + "".join(lead + unit + ln[len(lead) :] if ln.strip() else ln for ln in lines)
    )


def _owns_lines(lines: list[str], node: ast.stmt, start: int) -> bool:
    """The statement begins its first line and nothing but a comment follows it on its last."""
    first = lines[start - 1]
    lead = len(first) - len(first.lstrip(" \t"))
    if start == node.lineno:
        if len(first[:lead].encode()) != node.col_offset:
            return False
    elif not first.lstrip(" \t").startswith("@"):
        return False
    last = lines[node.end_lineno - 1].encode()
    rest = last[node.end_col_offset :].decode("utf-8", "replace").strip()
    return not rest or rest.startswith("#")


def _region_of(
    ctx: FileContext, lines: list[str], chain: list[ast.stmt], line: int
) -> Region | None:
    """``chain``: statements holding ``line``, innermost first. None: the whole file."""
    for i, node in enumerate(chain):
        start = stmt_start(node)
        if not _owns_lines(lines, node, start):
            continue
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body:
            if node.end_lineno - start > BIG and i == 0:
                narrow = _element(lines, node, line)
                if narrow is not None:
                    return narrow
            return Region(start, node.end_lineno)
        if i == 0:
            b0 = stmt_start(body[0])
            b0_line = lines[b0 - 1]
            body_col = body[0].col_offset if b0 == body[0].lineno else None
            fresh = (
                body_col is None
                or len(b0_line[:body_col].encode()) == body_col
                and not b0_line[:body_col].strip()
            )
            if fresh and start <= line < b0 and b0 > node.lineno:
                return Region(start, b0 - 1, header=True)
        return Region(start, node.end_lineno)
    return None


_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Call)


def _element(lines: list[str], stmt: ast.stmt, line: int) -> Region | None:
    """The outermost container element (list/tuple/set/dict item, call argument) of at most BIG
    lines that holds ``line`` and owns its lines: only indentation before it, only closing
    brackets, commas or a comment after it (so every finding starting on them is inside)."""
    node = stmt
    while True:
        kids = [
            k
            for k in ast.iter_child_nodes(node)
            if hasattr(k, "end_lineno") and k.lineno <= line <= k.end_lineno
        ]
        if len(kids) != 1:
            return None
        kid = kids[0]
        if (
            isinstance(node, _CONTAINERS)
            and isinstance(kid, ast.expr)
            and kid.end_lineno - kid.lineno <= BIG
        ):
            first, last = lines[kid.lineno - 1], lines[kid.end_lineno - 1]
            col = len(first.encode()[: kid.col_offset].decode("utf-8", "replace"))
            end_col = len(last.encode()[: kid.end_col_offset].decode("utf-8", "replace"))
            if not first[:col].strip() and _TAIL.fullmatch(last[end_col:].rstrip("\n")):
                return Region(kid.lineno, kid.end_lineno, col=col, end_col=end_col)
        node = kid


def regions(ctx: FileContext, lines: list[str], finding_lines) -> list[Region] | None:
    """Disjoint regions covering ``finding_lines`` and the statements families rewrite whole
    (``ctx.blocks``), in file order; None: use the whole file."""
    stmts = sorted(ctx.stmts, key=lambda s: (stmt_start(s), -s.end_lineno))
    found: list[Region] = [Region(start, end) for start, end in sorted(ctx.blocks)]
    for line in sorted(set(finding_lines)):
        chain = [s for s in stmts if stmt_start(s) <= line <= s.end_lineno]
        chain.sort(key=lambda s: s.end_lineno - stmt_start(s))
        if not chain:
            return None
        r = _region_of(ctx, lines, chain, line)
        if r is None:
            return None
        found.append(r)
    out: list[Region] = []
    for r in sorted(set(found), key=lambda r: (r.start, -r.end)):
        if out and out[-1].contains(r):
            continue
        if out and r.start <= out[-1].end:
            return None  # overlapping, not nested: cannot happen for statements, but be safe
        out.append(r)
    return out
