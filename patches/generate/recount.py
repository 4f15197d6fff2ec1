"""The summary's counts, per finding of the report: fixed or left, as ``--explain`` decides it.

A finding is fixed when the series rewrote it (``plan.fixed_at``: also a rewrite that keeps
CUDA's own call under CUDA's check on purpose, a ``keeps_cuda`` rule such as HN109/HN116, whose
rescan still finds the call on the line it wrote), or when the tree the series leaves no longer
has it: a rewrite also removes findings it was not asked about (the branch a device-pick block
was, a literal inside a rewritten unit), and a use of a project wrapper goes when the wrapper is
made neutral (``tree_uses``). Else it is left. Findings on lines the series wrote that no
finding of the report becomes (a ``keeps_cuda`` guard's ``torch.cuda.is_available()``) are
counted apart, as ``written``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from patches.generate import tree_uses
from patches.generate.plan import _map_line
from patches.generate.state import Run


@dataclass
class Counts:
    before: Counter
    fixed: Counter
    left: Counter
    written: Counter
    left_at: set = field(default_factory=set)  # (path, rule, line, col) of each finding left


def summary_counts(run: Run) -> tuple[Counter, Counter, Counter, Counter]:
    """(before, fixed, left, written) per rule; ``fixed + left == before``."""
    c = counts(run)
    return c.before, c.fixed, c.left, c.written


def counts(run: Run) -> Counts:
    """The summary's counts per rule, and which findings are left (their reasons are printed)."""
    plan, report = run.plan, run.report
    changed = {c.path: c.after for c in plan.changes()}
    selected = set(run.audit.selected)
    rescans = {p: run.audit.rescan(t, p)[0] for p, t in changed.items()}
    after = Counter(
        (p, f.rule, f.line) for p, fs in rescans.items() for f in fs if f.rule in selected
    )
    if any(tree_uses.wrapper_of(f) for f in report.findings):
        uses, _ = tree_uses.after(run, changed, rescans)
        after.update((g.path, g.rule, g.line) for g in uses)
    before, fixed, left, left_at = Counter(), Counter(), Counter(), set()
    for f in report.findings:
        before[f.rule] += 1
        rewritten = (f.path, f.rule, f.line, f.col) in plan.fixed_at
        line = (
            _map_line(plan.originals[f.path], changed[f.path], f.line)
            if f.path in changed
            else f.line
        )
        still = (f.path, f.rule, line)
        if not rewritten and after[still] > 0:
            after[still] -= 1  # one finding of the result per finding left
            left[f.rule] += 1
            left_at.add((f.path, f.rule, f.line, f.col))
        elif not rewritten and f.path not in changed and tree_uses.wrapper_of(f) is None:
            left[f.rule] += 1  # a file the series leaves as it is
            left_at.add((f.path, f.rule, f.line, f.col))
        else:
            fixed[f.rule] += 1
    written = Counter()
    for (path, rule, _), n in after.items():
        if n > 0 and path in changed:
            written[rule] += n
    return Counts(before, fixed, left, written, left_at)
