"""The one-line scan summary every format and the CLI print."""

from __future__ import annotations

from ..model import Report


def summary_line(report: Report) -> str:
    langs = ", ".join(f"{n} {k}" for k, n in sorted(report.languages.items())) or "no files"
    return (
        f"{len(report.findings)} findings in {report.files_with_findings} files "
        f"({report.files_scanned} scanned: {langs}); {len(report.errors)} errors; "
        f"{report.duration_s:.2f}s"
    )
