"""Inline suppression: ``# hn: ignore[HN101]`` / ``# hn: ignore[HN1, cuda-synchronize]``.

The comment goes on the finding's first line. Codes are rule ids, id prefixes (``HN5`` = the
family) or rule names. A bare ``# hn: ignore`` without codes is deliberately NOT honoured: like a
bare ``# noqa`` it would silently hide every future rule on that line (pytorch#56272).
"""

from __future__ import annotations

import re

from .model import Rule

_RX = re.compile(r"#\s*hn:\s*ignore\[([^\]]*)\]")


def suppressed_lines(text: str) -> dict[int, tuple[str, ...]]:
    """{1-based line: codes} for every line carrying a suppression comment."""
    if "hn:" not in text:
        return {}
    out: dict[int, tuple[str, ...]] = {}
    for i, line in enumerate(text.split("\n"), 1):
        if "hn:" in line:
            m = _RX.search(line)
            if m:
                out[i] = tuple(c.strip() for c in m.group(1).split(",") if c.strip())
    return out


def is_suppressed(sup: dict[int, tuple[str, ...]], line: int, rule: Rule) -> bool:
    codes = sup.get(line)
    return bool(codes) and any(
        c == rule.name or (c.upper().startswith("HN") and rule.id.startswith(c.upper()))
        for c in codes
    )
