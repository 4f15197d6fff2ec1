"""The comment scanner: every comment of a file by line, for the ``cuda-comment`` kind."""

from __future__ import annotations

import io
import tokenize


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
