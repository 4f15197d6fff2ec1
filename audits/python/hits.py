"""The hit-line prefilter: which lines hold a CUDA token or a name bound to a CUDA thing.

Statements without a hit line are neither parsed (segmented parse) nor visited.
"""

from __future__ import annotations

import re
from typing import Sequence

from audits.languages import CUDA_TOKENS as TOKENS

_WORDS = tuple(t.decode() for t in TOKENS)


def hit_lines(data: bytes, low: bytes, aliases: Sequence[str] = ()) -> list[int]:
    """Sorted 1-based line numbers holding a CUDA token or an alias name."""
    found = _token_lines(low)
    if aliases:
        rx = re.compile(rb"\b(?:" + b"|".join(re.escape(a.encode()) for a in aliases) + rb")\b")
        found += _lines_matching(rx, data)
        return sorted(set(found))
    return found


def _token_lines(low: bytes) -> list[int]:
    """Sorted 1-based numbers of the lines holding a token: ``bytes.find`` per token and hit
    line (a C substring search; a regex alternation scans the bytes several times slower)."""
    starts: list[int] = []
    find = low.find
    for tok in TOKENS:
        pos = find(tok)
        while pos >= 0:
            starts.append(pos)
            eol = find(b"\n", pos)
            if eol < 0:
                break
            pos = find(tok, eol)
    if not starts:
        return []
    starts.sort()
    found: list[int] = []
    line, last, count = 1, 0, low.count
    for pos in starts:
        line += count(b"\n", last, pos)
        last = pos
        if not found or found[-1] != line:
            found.append(line)
    return found


def _lines_matching(rx: re.Pattern, data: bytes) -> list[int]:
    """Sorted 1-based numbers of the lines where ``rx`` matches; one search per such line."""
    found: list[int] = []
    line, last = 1, 0
    search, count, find = rx.search, data.count, data.find
    m = search(data)
    while m is not None:
        pos = m.start()
        line += count(b"\n", last, pos)
        found.append(line)
        last = find(b"\n", pos)
        if last < 0:
            break
        m = search(data, last)
    return found


def cuda_aliases(imports: dict[str, str]) -> list[str]:
    """Local names bound to CUDA things whose own spelling carries no CUDA token."""
    return [
        k
        for k, v in imports.items()
        if k != v
        and any(t in v.lower() for t in _WORDS)
        and not any(t in k.lower() for t in _WORDS)
    ]
