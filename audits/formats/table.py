"""The terminal view (default): counts grouped by subsystem, category and rule, then a summary.

Individual findings are listed when there are few (<= 60) or with --show-findings.
"""

from __future__ import annotations

import io
from collections import Counter
from typing import Sequence

from rich.console import Console
from rich.table import Table

from ..model import Report, Rule
from .summary import summary_line

LIST_UP_TO = 60


def render(
    report: Report, rules: Sequence[Rule], *, color: bool = False, show_findings: bool | None = None
) -> str:
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=color, no_color=not color, width=120, highlight=False)
    if show_findings or (show_findings is None and len(report.findings) <= LIST_UP_TO):
        con.print(_findings(report))
    con.print(_by_subsystem(report))
    con.print(_by_rule(report, {r.id: r for r in rules}))
    if report.errors:
        con.print(_not_scanned(report))
    con.print(summary_line(report))
    return buf.getvalue()


def _findings(report: Report) -> Table:
    t = Table(title="Findings", show_lines=False, expand=False)
    t.add_column("location", overflow="fold", min_width=24)
    for col in ("rule", "source", "replacement"):
        t.add_column(
            col, overflow="ellipsis", no_wrap=True, max_width=44 if col == "source" else 30
        )
    for f in report.findings:
        t.add_row(
            f"{f.path}:{f.line}:{f.col}", f"{f.rule} {f.name}", f.source[:70], f.replacement or "-"
        )
    return t


def _by_subsystem(report: Report) -> Table:
    subs = report.counts("subsystem")
    cats_by_sub: dict[str, Counter] = {}
    for f in report.findings:
        cats_by_sub.setdefault(f.subsystem, Counter())[f.category] += 1
    t = Table(title="By subsystem")
    t.add_column("subsystem")
    t.add_column("findings", justify="right")
    t.add_column("top categories")
    for s, n in subs.most_common(25):
        t.add_row(s, str(n), ", ".join(f"{c} {k}" for c, k in cats_by_sub[s].most_common(4)))
    if len(subs) > 25:
        t.add_row(f"... {len(subs) - 25} more", str(sum(n for _, n in subs.most_common()[25:])), "")
    return t


def _by_rule(report: Report, by_id: dict[str, Rule]) -> Table:
    t = Table(title="By category and rule")
    for col in ("category", "rule", "name", "safety", "count"):
        t.add_column(col, justify="right" if col == "count" else "left")
    rule_counts = report.counts("rule")
    for cat, _ in report.counts("category").most_common():
        in_cat = [
            (r, n)
            for r, n in rule_counts.items()
            if (by_id[r].category if r in by_id else "") == cat
        ]
        for rid, n in sorted(in_cat, key=lambda x: -x[1]):
            r = by_id[rid]
            t.add_row(cat, rid, r.name, r.safety, str(n))
    return t


def _not_scanned(report: Report) -> Table:
    t = Table(title="Files not scanned")
    t.add_column("reason")
    t.add_column("count", justify="right")
    t.add_column("e.g.")
    for reason, n in Counter(e.reason for e in report.errors).most_common():
        ex = next(e for e in report.errors if e.reason == reason)
        t.add_row(reason, str(n), f"{ex.path} {ex.detail}"[:80])
    return t
