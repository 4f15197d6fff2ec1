"""The wild-scripts benchmark's reading of generate's decisions: tallies and split units.

Input per file: its original text, generate's decision for every finding (``wild_why``: the
lines ``--explain`` prints) and the series' zero-context diff (``replay_score.parse_diff``).

A *unit* is the innermost function around a line (``Class.method``, ``outer.inner``), or
``<top level>`` for code outside functions. A *split unit* is one where the series rewrote at
least one CUDA site and left at least one finding that counts. A left finding does not count
(a) on an old line the series replaced (its line was written by the series: a ``keeps_cuda``
rule such as HN109 keeps CUDA's call under a CUDA check on purpose), nor (b) inside a CUDA-only
block the series left whole: an ``if`` whose test names CUDA, whose body generate leaves as
``cuda-branch`` (only CUDA reaches it) and of which no line changed (the test line and the body;
a CUDA-info report such as ``if torch.cuda.is_available(): log(torch.version.cuda)``), nor (c)
on a statement that only sets or asserts a CUDA library's flag (``cudnn.benchmark = True``: it
runs anywhere and does nothing off CUDA; the gate's ``library_flag``). A CUDA
requirement such as ``if not torch.cuda.is_available(): raise`` has no ``cuda-branch`` body:
left beside a rewrite, it splits its unit.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from audits.resolve import bindings, qualify
from patches.generate.explain import TAKEN, WRAPPER_GONE
from patches.generate.intent.data import library_flags
from patches.generate.intent.index import library_flag

if TYPE_CHECKING:
    from replay_score import Hunk

TOP = "<top level>"
NO_DEVICE = "no `device` in scope"
UNDECIDED = "undecided"
_EVIDENCE = re.compile(r"^ {4}([a-z][\w-]*) \(")


@dataclass
class Site:
    """One finding of the original tree and generate's decision."""

    rel: str
    rule: str
    line: int
    end_line: int
    status: str  # "rewritten" | "fixed" (another rewrite took its line) | "left" | "undecided"
    reason: str  # the reason key a left finding is grouped by
    kinds: list[str] = field(default_factory=list)  # the intent gate's evidence kinds
    unit: str = TOP
    text: str = ""
    counts: bool = True  # a left finding that counts towards a split (see the module doc)


@dataclass
class SplitUnit:
    rel: str
    unit: str
    rewritten: list[Site]
    left: list[Site]


def classify(lines: list[str]) -> tuple[str, str, list[str]]:
    """``(status, reason, evidence kinds)`` from ``--explain``'s lines for one finding."""
    first = lines[0] if lines else "left: no decision"
    kinds = [m.group(1) for ln in lines[1:] if (m := _EVIDENCE.match(ln))]
    if first.startswith("REWRITTEN"):
        return "rewritten", "rewritten", kinds
    if any(TAKEN in ln for ln in lines):
        return "fixed", "its line rewritten for another site", kinds
    if any(WRAPPER_GONE in ln for ln in lines):
        return "fixed", "its wrapper made neutral", kinds
    if kinds:
        return "left", next((k for k in kinds if k != "cuda-comment"), kinds[0]), kinds
    text = re.sub(r"^(LEFT|left)(, [^:]*)?:\s*", "", first)
    return "left", text.split(": ")[0].split(" (")[0].strip() or first, kinds


def unit_spans(tree: ast.AST) -> list[tuple[int, int, str]]:
    """``(first, last, qualified name)`` of every function, outer before inner."""
    out: list[tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.append((child.lineno, child.end_lineno or child.lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def unit_of(spans: list[tuple[int, int, str]], line: int) -> str:
    inside = [s for s in spans if s[0] <= line <= s[1]]
    return max(inside, key=lambda s: s[0])[2] if inside else TOP


def cuda_blocks(tree: ast.AST, text: str) -> list[tuple[int, int, int]]:
    """``(first, test's last line, body's last line)`` of every ``if`` whose test names CUDA."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = ast.get_source_segment(text, node.test) or ""
            if "cuda" in test.lower():
                end = node.test.end_lineno or node.lineno
                out.append((node.lineno, end, node.body[-1].end_lineno or end))
    return out


def edited(hunks: list[Hunk], first: int, last: int) -> bool:
    """Whether the series replaces an old line in first..last or inserts between them."""
    for h in hunks:
        if h.touches(first, last) or (not h.old and first < h.old_start <= last):
            return True
    return False


def changed_lines(hunks: list[Hunk]) -> set[int]:
    return {n for h in hunks for n in range(h.old_start, h.old_start + len(h.old))}


def sites_of(
    rel: str, text: str, findings: list[dict], hunks: list[Hunk], undecided: list[dict] = ()
) -> list[Site]:
    """Every finding of one file as a Site, with its unit and whether a left one counts;
    ``undecided``: the scan's findings with no decision (wild_why), kept apart."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    spans, src = unit_spans(tree), text.splitlines()
    sites = []
    for f in [*findings, *undecided]:
        status, reason, kinds = classify(f["lines"]) if "lines" in f else (UNDECIDED, "", [])
        line = f["line"]
        code = src[line - 1].strip() if 0 < line <= len(src) else ""
        site = Site(rel, f["rule"], line, f.get("end_line") or line, status, reason, kinds)
        site.unit, site.text = unit_of(spans, line), code
        sites.append(site)
    changed = changed_lines(hunks)
    whole = [b for b in cuda_blocks(tree, text) if not edited(hunks, b[0], b[2])]
    only_cuda = [
        b for b in whole if any(b[1] < s.line <= b[2] and "cuda-branch" in s.kinds for s in sites)
    ]
    flags = flag_lines(tree)
    for s in sites:
        if s.status == "left":
            in_block = any(b[0] <= s.line <= b[2] for b in only_cuda)
            s.counts = s.line not in changed and not in_block and s.line not in flags
    return sites


def flag_lines(tree: ast.AST) -> set[int]:
    """The lines of statements that only set or assert a CUDA library's flag
    (``torch.backends.cudnn.benchmark = True``, also through ``import torch.backends.cudnn as
    cudnn``: the intent gate's ``library_flag``), and the imports of those settings' modules:
    they run anywhere and do nothing off CUDA, so one left beside a rewrite splits nothing."""
    imports = {
        local: q
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for local, q in bindings(node, "")
        if q is not None
    }
    return {
        n
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
        and (
            library_flag(node, lambda _, dotted: qualify(dotted.split("."), imports.get))
            or _flag_module_import(node)
        )
        for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }


def _flag_module_import(node: ast.stmt) -> bool:
    """``import torch.backends.cudnn as cudnn``: only modules of CUDA's library settings."""
    if not isinstance(node, (ast.Import, ast.ImportFrom)):
        return False
    names = [q for _, q in bindings(node, "")]
    modules = tuple(p.rstrip(".") for p in library_flags())
    return bool(names) and all(q is not None and q.startswith(modules) for q in names)


def split_units(sites: list[Site]) -> list[SplitUnit]:
    """The units with a rewritten site and a left site that counts, in file and line order."""
    by_unit: dict[tuple[str, str], list[Site]] = {}
    for s in sites:
        by_unit.setdefault((s.rel, s.unit), []).append(s)
    out = []
    for (rel, unit), group in by_unit.items():
        rewritten = [s for s in group if s.status == "rewritten"]
        left = [s for s in group if s.status == "left" and s.counts]
        if rewritten and left:
            key = lambda s: (s.line, s.rule)  # noqa: E731
            out.append(SplitUnit(rel, unit, sorted(rewritten, key=key), sorted(left, key=key)))
    return sorted(out, key=lambda u: (u.rel, u.rewritten[0].line))


def unmatched(sites: list[Site], hunks: dict[str, list[Hunk]]) -> list[Site]:
    """Rewritten sites whose line the series' diff does not touch (decision and series
    disagree: a figure to report, expected empty)."""
    return [
        s
        for s in sites
        if s.status == "rewritten" and not edited(hunks.get(s.rel, []), s.line, s.end_line)
    ]


def tally(sites: list[Site]) -> dict:
    """Findings before / fixed / left per rule (undecided ones count in before only), left ones
    per reason, the no-device count."""
    by_rule: dict[str, list[int]] = {}
    for s in sites:
        row = by_rule.setdefault(s.rule, [0, 0, 0])
        row[0] += 1
        if s.status != UNDECIDED:
            row[1 if s.status != "left" else 2] += 1
    left = [s for s in sites if s.status == "left"]
    return {
        "before": len(sites),
        "rewritten": sum(s.status == "rewritten" for s in sites),
        "fixed": sum(s.status in ("rewritten", "fixed") for s in sites),
        "left": len(left),
        "undecided": sum(s.status == UNDECIDED for s in sites),
        "by_rule": dict(sorted(by_rule.items())),
        "left_by_reason": dict(Counter(s.reason for s in left).most_common()),
        "no_device": sum(s.reason == NO_DEVICE for s in left),
    }
