"""Baselines: report only findings that are not already in an earlier report.

Matching is on ``Finding.fingerprint()`` (rule, path, normalised source line), not on line
numbers, with multiplicity: two identical lines in the baseline absorb two findings.
"""

from __future__ import annotations

import json
from collections import Counter

from .model import Finding, Report


class BaselineError(ValueError):
    pass


def load_report(path: str) -> Report:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BaselineError(f"{path}: cannot read a JSON report: {e}") from None
    if not isinstance(doc, dict) or "findings" not in doc:
        raise BaselineError(f"{path}: not a hwneutral JSON report (no 'findings')")
    try:
        return Report.from_dict(doc)
    except TypeError as e:
        raise BaselineError(f"{path}: malformed report: {e}") from None


def split(
    old: list[Finding], new: list[Finding]
) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """(new-only, existing, fixed) comparing two finding lists by fingerprint."""
    budget = Counter(f.fingerprint() for f in old)
    fresh, existing = [], []
    for f in new:
        fp = f.fingerprint()
        if budget[fp] > 0:
            budget[fp] -= 1
            existing.append(f)
        else:
            fresh.append(f)
    left = Counter(budget)
    fixed = []
    for f in old:
        fp = f.fingerprint()
        if left[fp] > 0:
            left[fp] -= 1
            fixed.append(f)
    return fresh, existing, fixed


def apply_baseline(report: Report, baseline: Report) -> Report:
    fresh, _, _ = split(baseline.findings, report.findings)
    return report.only(fresh)
