"""The summary's counts, from the tree the series leaves: a rescan of every file it changes.

The plan decides site by site; a rewrite also removes findings it was not asked about (the
branch a device-pick block was, a literal inside a rewritten unit), so counting the plan's own
sites would claim findings left that a rescan no longer finds. The user's question is what is
left after ``git am``: that is what these counts answer.
"""

from __future__ import annotations

from collections import Counter

from patches.generate.state import Run


def left_after(run: Run) -> Counter:
    """Per rule, the selected rules' findings after the series: the rescan of each changed file
    (its final text), the report's findings for every other file."""
    plan, report = run.plan, run.report
    changed = {c.path: c.after for c in plan.changes()}
    selected = set(run.audit.selected)
    counts = Counter(f.rule for f in report.findings if f.path not in changed)
    for path, text in changed.items():
        found, _ = run.audit.rescan(text, path)
        counts.update(f.rule for f in found if f.rule in selected)
    return counts


def summary_counts(run: Run) -> tuple[Counter, Counter, Counter]:
    """(before, fixed, left) per rule: the report's findings, those the series removed, those a
    rescan of its result still finds (a rule the rewrites introduce counts as left, none
    fixed)."""
    before = Counter(f.rule for f in run.report.findings)
    left = left_after(run)
    fixed = Counter({r: before[r] - left[r] for r in before if before[r] > left[r]})
    return before, fixed, left
