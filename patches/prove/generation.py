"""A subsystem's series from ``patches.generate`` used as a library: a scan of the subsystem's
files of the installed torch, the codemod's plan (safe + review fixes, as ``patches.generate
--unsafe-fixes``), and the series written with the bundle's own commit messages
(patches.prove.testplan)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from audits.model import Report
from patches.generate import audit_io, pipeline
from patches.generate import plan as planner
from patches.generate.series import Patch, write_series
from patches.generate.state import Settings
from patches.prove.config import ProveError
from patches.prove.testplan import Signature, with_test_plan

MAX_FILES = 10  # files per patch, as patches.generate's default
TARGET = "torch"  # PyTorch's own APIs only


@dataclass
class Generated:
    """What generation produced for one subsystem."""

    findings: int | None
    summary: str  # one line per count, for the bundle
    patches: list[str] = field(default_factory=list)  # file names in series order


def scan(site: Path, files: list[str], rules) -> Report:
    """The audit's report of ``files`` only (paths relative to ``site``)."""
    report = Report(root=str(site))
    for rel in files:
        found, errors = audit_io.scan_source((site / rel).read_bytes(), rel, rules)
        report.findings += found
        report.errors += errors
        report.files_scanned += 1
    return report


def plan_series(site: Path, files: list[str]) -> tuple[Report, planner.Plan]:
    """The codemod's plan for ``files``; raises ProveError when it does not account for every
    finding (a bug of the codemod: nothing is written)."""
    settings = Settings(
        site,
        TARGET,
        unsafe_fixes=True,
        max_files=MAX_FILES,
        tree=".",
        series="series",
        devices="cpu",
    )
    run = pipeline.read(settings)
    report = scan(site, files, list(run.audit.rules.values()))
    plan = pipeline.plan(pipeline.scan(run, report)).plan
    broken = plan.unaccounted(report.findings)
    if broken:
        raise ProveError(
            "patches.generate does not account for every finding: " + "; ".join(broken[:3])
        )
    return report, plan


def summary(report: Report, plan: planner.Plan) -> str:
    """Counts as ``patches.generate`` prints them: fixed, left (by reason), file errors."""
    fixed = Counter(f.rule for f in plan.fixed)
    left = Counter(x.finding.rule for x in plan.left)
    lines = [
        f"{len(plan.patches)} patches, {len(plan.changes())} files, {sum(fixed.values())} "
        f"findings fixed, {sum(left.values())} left, {len(plan.errors)} file errors"
    ]
    for rule, n in sorted(report.counts("rule").items()):
        lines.append(f"  {rule:8} before {n:5}  fixed {fixed[rule]:5}  left {left[rule]:5}")
    reasons = Counter(x.reason.split(":", 1)[0] for x in plan.left)
    lines += [f"  left {n:5}: {why}" for why, n in reasons.most_common(8)]
    return "\n".join(lines)


def generate(
    site: Path, files: list[str], out: Path, signature: Signature, test_plan: str
) -> Generated:
    """Write the series for ``files`` into ``out/series`` with ``test_plan`` as each commit's
    ``Test Plan:``; return what was written."""
    report, plan = plan_series(site, files)
    patches = [Patch(p.subject, with_test_plan(p.body, test_plan), p.changes) for p in plan.patches]
    written = write_series(patches, out / "series", signature.author, signature.date)
    return Generated(len(report.findings), summary(report, plan), [p.name for p in written])


def copy_series(given: Path, out: Path) -> Generated:
    """A given series (``--series``) copied into the bundle as it is."""
    from patches.validate import selection

    patches = selection.series_files(given)
    (out / "series").mkdir(parents=True)
    for p in patches:
        (out / "series" / p.name).write_bytes(p.read_bytes())
    (out / "series" / "series").write_text("".join(p.name + "\n" for p in patches))
    return Generated(None, f"given: {given}", [p.name for p in patches])
