"""What one run of ``patches.generate`` carries from stage to stage (``pipeline``): the settings
the user gave, the audit it reads, the fix specs, the report, and the plan it builds."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from audits.model import FileError, Finding, Report
from patches.generate.audit_io import Audit
from patches.generate.codemods import FixSpec
from patches.generate.series import FileChange, Patch


@dataclass(frozen=True)
class Settings:
    """What the user asked for (``patches.generate``'s options, or a library caller's)."""

    root: Path
    target: str = "torch"
    unsafe_fixes: bool = False
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    max_files: int = 10
    tree: str = "."  # the tree and the series as the Test Plan names them
    series: str = "DIR"
    devices: str = "cpu,trn"
    # the oldest torch the patches must run on: "auto" (the tree's packaging declares it:
    # ``torch_floor.declared``), "none", or a release ("2.1"); rewrites that call a newer API
    # are left
    torch_floor: str = "auto"


@dataclass
class Left:
    finding: Finding
    reason: str


@dataclass
class Plan:
    patches: list[Patch] = field(default_factory=list)
    originals: dict[str, str] = field(default_factory=dict)  # path -> text before the series
    finals: dict[str, str] = field(default_factory=dict)  # path -> text after the series
    fixed: list[Finding] = field(default_factory=list)
    left: list[Left] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    modes: dict[str, str] = field(default_factory=dict)  # path -> git file mode
    kept_imports: list[tuple[str, str, str]] = field(default_factory=list)  # (path, name, by)
    unscanned: dict[str, str] = field(default_factory=dict)  # path -> why it was not rescanned
    # (path, rule, line, col) of every fixed finding as the original file has it (``fixed``
    # holds them as the text each patch applies to reads)
    fixed_at: set[tuple[str, str, int, int]] = field(default_factory=set)
    # (path, rule) -> the locals its step renamed with their code (``local_rename``)
    renamed: dict[tuple[str, str], list] = field(default_factory=dict)

    def unaccounted(self, findings: Sequence[Finding]) -> list[str]:
        """The invariant of every run: per rule, ``fixed + left == findings`` of the report
        (a finding is either rewritten or left with a reason, never dropped). One line per rule
        that breaks it, naming the files whose counts differ; empty when it holds."""
        want = Counter((f.rule, f.path) for f in findings)
        got = Counter((f.rule, f.path) for f in self.fixed)
        got.update((x.finding.rule, x.finding.path) for x in self.left)
        out = []
        for rule in sorted({r for r, _ in want} | {r for r, _ in got}):
            n_want = sum(n for (r, _), n in want.items() if r == rule)
            n_fixed = sum(1 for f in self.fixed if f.rule == rule)
            n_left = sum(1 for x in self.left if x.finding.rule == rule)
            paths = sorted({p for (r, p) in want | got if r == rule and want[r, p] != got[r, p]})
            if n_want != n_fixed + n_left or paths:
                out.append(
                    f"{rule}: {n_want} findings, {n_fixed} fixed + {n_left} left"
                    + (f" (differs in {', '.join(paths[:5])})" if paths else "")
                )
        return out

    def changes(self) -> list[FileChange]:
        return [
            FileChange(p, self.originals[p], self.finals[p], self.modes[p])
            for p in sorted(self.finals)
            if self.finals[p] != self.originals[p]
        ]


@dataclass
class Run:
    """One run: ``read`` fills the audit and the specs, ``scan`` the report, ``plan`` the plan."""

    settings: Settings
    audit: Audit
    specs: dict[str, FixSpec]  # the rules this run may fix (safety and target applied)
    skipped: dict[str, str]  # rule id -> why it is not fixed
    # the rules an --unsafe-fixes run of every rule fixes and this one does not (their sites
    # are decided as that run decides them, never rewritten: codemods.FileOptions.shadow)
    shadow: dict[str, FixSpec] = field(default_factory=dict)
    report: Report | None = None
    plan: Plan | None = None
    # the scanned tree for units spanning files (``plan.tree_index``: built once, on demand)
    tree: object | None = None
    started: float = field(default_factory=time.perf_counter)
    # the tree's private CUDA-named helpers (``helper_rename.HelperRenames``), read once when
    # first asked (``helper_rename.of``); False where this run renames none
    helpers: object = None
    # the tree's Python files as the scan walks them, and its project wrappers of CUDA queries
    # (qualified name -> ``Wrapper``) as it stands (``tree_uses``: each read once, on demand)
    python_files: list[str] | None = None
    wrappers: dict | None = None
    # the resolved ``settings.torch_floor`` (``torch_floor.of``): a Floor, None, or False
    # before it is first asked
    floor: object = False
