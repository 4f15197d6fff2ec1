"""``patches.generate`` as one pass: read -> scan -> plan (per file: rescan, intent gate, rewrite)
-> series -> summary. Each stage is entered once and hands the same ``Run`` on; ``cli`` parses
and prints, library callers (``patches.prove``) call ``generate``.
"""

from __future__ import annotations

import time

from audits.model import Report
from patches.common.collector import relaxed
from patches.generate import audit_io
from patches.generate import plan as planner
from patches.generate.state import Run, Settings
from patches.generate.targets import fix_specs


def read(settings: Settings) -> Run:
    """The catalogue, the selection (``CatalogError`` on an unknown selector) and the fix specs
    (safety and target applied)."""
    started = time.perf_counter()
    audit = audit_io.open_audit(settings.root, settings.select, settings.ignore)
    specs, skipped = fix_specs(audit.selected.values(), settings.target, settings.unsafe_fixes)
    every, _ = fix_specs(audit.rules.values(), settings.target, True)
    shadow = {r: s for r, s in every.items() if r not in specs}
    return Run(settings, audit, specs, skipped, shadow, started=started)


def scan(run: Run, given: Report | None = None) -> Run:
    """The tree's findings of the selected rules (``given``: a report read from ``--report``).
    ``ValueError``: the audit's config error (``[tool.hwneutral]`` in pyproject.toml)."""
    report = given if given is not None else run.audit.scan()
    report.findings = [f for f in report.findings if f.rule in run.audit.selected]
    run.report = report
    return run


def plan(run: Run) -> Run:
    """The series: per file one rescan, the intent gate and the rules' steps (``plan.build``),
    under the relaxed collector policy (``patches.common.collector``)."""
    with relaxed():
        run.plan = planner.build(run)
    return run


def generate(settings: Settings, given: Report | None = None) -> Run:
    """read -> scan -> plan, for a library caller; the plan is in ``run.plan`` (check
    ``run.plan.unaccounted(run.report.findings)`` before writing it)."""
    return plan(scan(read(settings), given))
