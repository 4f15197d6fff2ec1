"""From the visitor's matches to ``Finding`` records: positions (UTF-8 byte offsets to character
columns), branches whose test holds a predicate match, suppression comments, messages."""

from __future__ import annotations

import bisect

from audits.model import Finding, Rule
from audits.python.visitor import Scan
from audits.suppress import is_suppressed, suppressed_lines


def subsystem(path: str) -> str:
    """First two directory components (``torch/_dynamo``, ``test/distributed``); ``.`` at top."""
    dirs = path.split("/")[:-1]
    return "/".join(dirs[:2]) if dirs else "."


def char_col(lines: list[str], line: int, off: int) -> int:
    """1-based character column from ast's UTF-8 byte offset."""
    s = lines[line - 1] if 0 < line <= len(lines) else ""
    if s.isascii():
        return off + 1
    return len(s.encode()[:off].decode("utf-8", "ignore")) + 1


Item = tuple[Rule, int, int, int, int, str, str]  # rule, span, the matched name, kind


def findings(scan: Scan, relpath: str, qual: str, lines: list[str], text: str) -> list[Finding]:
    items: list[Item] = []
    notes: dict[tuple[str, int, int], str] = {}
    for rule, node, matched, kind, note in scan.out:
        span = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        items.append((rule, *span, matched, kind))
        if note:
            notes[(rule.id, node.lineno, node.col_offset)] = note
    for rule, l1, c1, l2, c2, matched in scan.spans:
        items.append((rule, l1, c1, l2, c2, matched, rule.kind))
    items += _branches(scan, items)
    sub = subsystem(qual)
    sup = suppressed_lines(text)
    out = []
    seen = set()
    for rule, l1, c1, l2, c2, matched, kind in items:
        key = (rule.id, l1, c1)
        if key in seen or (sup and is_suppressed(sup, l1, rule)):
            continue
        seen.add(key)
        rep = rule.replacement_for(matched)
        msg = f"{rule.title}: " + (f"use {rep}" if rep else "no neutral equivalent, review by hand")
        if key in notes:
            msg += f" ({notes[key]})"
        source = lines[l1 - 1].strip() if l1 <= len(lines) else ""
        start, end = char_col(lines, l1, c1), char_col(lines, l2, c2)
        out.append(
            Finding(
                rule.id, rule.name, rule.category, kind, relpath, l1, start, l2, end, source, sub,
                msg, rep, rule.safety,
            )
        )  # fmt: skip
    return out


def _branches(scan: Scan, items: list[Item]) -> list[Item]:
    """Branches: a candidate whose test holds a predicate match."""
    preds = sorted(
        (l1, c1, l2, c2) for r, l1, c1, l2, c2, _, _ in items if r.id in scan.p.predicates
    )
    out: list[Item] = []
    if not preds:
        return out
    for kind, node, tests, start in scan.branch_cands:
        for t in tests:
            i = bisect.bisect_left(preds, (t.lineno, t.col_offset, 0, 0))
            if i < len(preds) and (preds[i][0], preds[i][1]) <= (t.end_lineno, t.end_col_offset):
                at = t if kind == "decorator" else start
                span = (at.lineno, at.col_offset, node.end_lineno, node.end_col_offset)
                out.append((scan.p.branches[kind], *span, kind, "branch"))
                break
    return out
