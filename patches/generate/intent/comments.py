"""The comment scanner: every comment of a file by line, for the ``cuda-comment`` kind."""

from __future__ import annotations

import ast
import io
import tokenize

from patches.generate.intent.nodes import compound


def comments(source: str) -> dict[int, tuple[str, bool]]:
    """line -> (comment text, whether the line holds nothing but the comment)."""
    out: dict[int, tuple[str, bool]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                alone = not tok.line[: tok.start[1]].strip()
                out[tok.start[0]] = (tok.string.lstrip("#").strip(), alone)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def block_above(found: dict[int, tuple[str, bool]], line: int) -> list[int]:
    """The lines of the comment block right above ``line`` (comments alone on their lines)."""
    out, above = [], line - 1
    while above in found and found[above][1]:
        out.append(above)
        above -= 1
    return out


def header_end(stmt) -> int:
    """The last line of ``stmt``'s header (the whole statement when it is simple; a ``match``'s
    header ends before its first case)."""
    if isinstance(stmt, ast.Match):  # its cases carry no position; their patterns do
        return stmt.cases[0].pattern.lineno - 1
    return stmt.body[0].lineno - 1 if compound(stmt) and stmt.body else stmt.end_lineno
