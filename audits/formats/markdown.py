"""Markdown: summary tables and the findings, for PR comments and issue bodies."""

from __future__ import annotations

from typing import Sequence

from ..model import Report, Rule
from .summary import summary_line


def _c(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def render(report: Report, rules: Sequence[Rule], limit: int = 500) -> str:
    by_id = {r.id: r for r in rules}
    out = ["# hwneutral audit", "", f"`{report.root}` — {summary_line(report)}", ""]
    out += [
        "## By rule",
        "",
        "| rule | name | category | safety | count |",
        "|---|---|---|---|---:|",
    ]
    for rid, n in sorted(report.counts("rule").items()):
        r = by_id.get(rid)
        out.append(
            f"| [{rid}](../{r.url()}) | {r.name} | {r.category} | {r.safety} | {n} |"
            if r
            else f"| {rid} | | | | {n} |"
        )
    out += ["", "## By subsystem", "", "| subsystem | count |", "|---|---:|"]
    out += [f"| `{s}` | {n} |" for s, n in report.counts("subsystem").most_common()]
    out += [
        "",
        "## Findings",
        "",
        "| location | rule | source | replacement |",
        "|---|---|---|---|",
    ]
    for f in report.findings[:limit]:
        out.append(
            f"| `{f.path}:{f.line}:{f.col}` | {f.rule} | `{_c(f.source)}` | {f.replacement or '—'} |"
        )
    if len(report.findings) > limit:
        out.append(f"\n… {len(report.findings) - limit} more (use --format json for all)")
    if report.errors:
        out += ["", "## Files not scanned", "", "| path | reason | detail |", "|---|---|---|"]
        out += [f"| `{e.path}` | {e.reason} | {_c(e.detail)} |" for e in report.errors]
    return "\n".join(out) + "\n"
