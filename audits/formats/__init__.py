"""Output formats: views of a Report. ``render(report, fmt, rules)`` returns the text."""

from __future__ import annotations

from typing import Sequence

from ..model import Report, Rule
from .summary import summary_line

__all__ = ["FORMATS", "render", "summary_line"]

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
