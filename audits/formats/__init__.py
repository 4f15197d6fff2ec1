"""Output formats: views of a Report. ``render(report, fmt, rules)`` returns the text."""

from __future__ import annotations

from typing import Sequence

from ..model import Report, Rule

FORMATS = ("table", "json", "yaml", "sarif", "markdown")


def render(
    report: Report,
    fmt: str,
    rules: Sequence[Rule],
    *,
    color: bool = False,
    show_findings: bool | None = None,
) -> str:
    if fmt == "json":
        from .jsonfmt import render as r

        return r(report)
    if fmt == "yaml":
        from .yamlfmt import render as r

        return r(report)
    if fmt == "sarif":
        from .sarif import render as r

        return r(report, rules)
    if fmt == "markdown":
        from .markdown import render as r

        return r(report, rules)
    if fmt == "table":
        from .table import render as r

        return r(report, rules, color=color, show_findings=show_findings)
    raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


def summary_line(report: Report) -> str:
    langs = ", ".join(f"{n} {k}" for k, n in sorted(report.languages.items())) or "no files"
    return (
        f"{len(report.findings)} findings in {report.files_with_findings} files "
        f"({report.files_scanned} scanned: {langs}); {len(report.errors)} errors; "
        f"{report.duration_s:.2f}s"
    )
