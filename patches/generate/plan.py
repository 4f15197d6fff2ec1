"""From a scan report to a patch series: one patch per (subsystem, rule), at most N files each.

Patches are built in series order on an in-memory copy of the tree, so each diff is against the
state its predecessors leave. Each file is rescanned once and analysed once: its rules become
steps applied on top of each other from that one analysis (``codemods.rewrite_steps``), with
every step's positions taken from the original text, so an import added by an earlier patch
never misplaces a later fix.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from audits.model import FileError, Finding, Report, Rule
from patches.generate import message
from patches.generate.codemods import FixSpec, rewrite_steps
from patches.generate.codemods.reexports import Importers
from patches.generate.linediff import opcodes
from patches.generate.series import FileChange, Patch
from patches.generate.targets import together

ScanFn = Callable[[bytes, str, Sequence[Rule]], tuple[list[Finding], list[FileError]]]


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


def _read(root: Path, rel: str) -> tuple[str, str]:
    p = root / rel
    if p.is_symlink() or not p.is_file():
        raise OSError("not a regular file")
    mode = "100755" if p.stat().st_mode & 0o111 else "100644"
    # newline="" semantics: bytes decoded as-is, so CRLF files round-trip untouched.
    return p.read_bytes().decode("utf-8"), mode


def build(
    root: Path,
    report: Report,
    rules: dict[str, Rule],
    specs: dict[str, FixSpec],
    skipped: dict[str, str],
    scan: ScanFn,
    max_files: int,
    tree: str,
    series: str,
    devices: str,
    package_prefix: str = "",
) -> Plan:
    """Plan the series for ``report`` (a scan of ``root``).

    ``specs``: the rules this run may fix (already filtered by safety and target);
    ``skipped``: rule id -> why it is not fixed (manual, review without --unsafe-fixes, ...).
    ``package_prefix``: the scan's (``audit_io.package_prefix(root)``): the rescan and the
    codemod resolve relative imports as the scan did.
    """
    plan = Plan(errors=list(report.errors))
    todo: dict[tuple[str, str], set[str]] = defaultdict(set)
    reported: dict[tuple[str, str], list[Finding]] = defaultdict(list)  # (path, rule) -> findings
    for f in sorted(report.findings, key=Finding.sort_key):
        if f.rule in specs:
            todo[(f.subsystem, f.rule)].add(f.path)
            reported[(f.path, f.rule)].append(f)
        else:
            plan.left.append(Left(f, skipped.get(f.rule, "no codemod for this rule")))
    # Per file: one rescan (all rules, as the audit does) and one analysis whose steps are the
    # file's rules in series order (a file's subsystem is fixed, so that is rule id order).
    rules_of: dict[str, list[str]] = defaultdict(list)
    for (subsystem, rule_id), paths in sorted(todo.items()):
        for path in paths:
            rules_of[path].append(rule_id)
    steps: dict[str, dict[str, tuple]] = {}
    all_rules = list(rules.values())
    importers = Importers(root, package_prefix)
    for (subsystem, rule_id), paths in sorted(todo.items()):
        rule, spec = rules[rule_id], specs[rule_id]
        changes: list[tuple[FileChange, list[Finding]]] = []
        for path in sorted(paths):
            if path not in steps:
                steps[path] = _file_steps(
                    root,
                    path,
                    rules_of[path],
                    all_rules,
                    specs,
                    scan,
                    plan,
                    importers,
                    package_prefix,
                )
            step = steps[path].get(rule_id)
            if step is None:  # unreadable now, or the rescan does not find them
                why = plan.unscanned.get(path, "the rescan of the file does not find it")
                plan.left += [Left(f, why) for f in reported[(path, rule_id)]]
                continue
            # Findings of the tree-level pass (a use of a project wrapper of a CUDA query, 'via
            # `pkg.mod.fn`') are not in the file's own rescan: left, they go with their wrapper.
            rescanned = {(f.rule, f.line, f.col) for _, fs in steps[path].values() for f in fs}
            plan.left += [
                Left(f, "a use of a project wrapper (tree-level finding): goes with the wrapper")
                for f in reported[(path, rule_id)]
                if (f.rule, f.line, f.col) not in rescanned
            ]
            result, found = step
            if result is None:  # lands with another rule's step (targets.together)
                continue
            if result.error:
                plan.errors.append(FileError(path, "codemod", result.error))
                plan.left += [Left(f, result.error) for f in found]
                continue
            found = _remap(found, plan.originals[path], result.before)
            done = {
                (r, _map_line(plan.originals[path], result.before, line))
                for r, line in result.outcome.applied
            }
            why = {
                (r, _map_line(plan.originals[path], result.before, line)): reason
                for r, line, reason in result.outcome.failed
            }
            sites = [f for f in found if (f.rule, f.line) in done]
            plan.left += [
                Left(f, why.get((f.rule, f.line), "no rewrite matched this site"))
                for f in found
                if (f.rule, f.line) not in done
            ]
            # A site may already be rewritten by an earlier step (a device-pick literal goes
            # with its is_available()): fixed, with nothing left to change here.
            plan.fixed += sites
            if result.changed:
                plan.kept_imports += [
                    (path, n, by)
                    for n, by in result.kept_imports
                    if (path, n, by) not in plan.kept_imports
                ]
                plan.finals[path] = result.after
                changes.append(
                    (FileChange(path, result.before, result.after, plan.modes[path]), sites)
                )
        chunks = [changes[i : i + max_files] for i in range(0, len(changes), max_files)]
        for n, chunk in enumerate(chunks, 1):
            sites = [s for _, ss in chunk for s in ss]
            plan.patches.append(
                Patch(
                    message.subject(message.display_new(spec), subsystem, n, len(chunks)),
                    message.body(
                        rule,
                        message.display_old(spec),
                        message.display_new(spec),
                        sites,
                        tree,
                        series,
                        devices,
                        also=[rules[r] for r in sorted({x.rule for x in sites} - {rule_id})],
                    ),
                    [c for c, _ in chunk],
                )
            )
    return plan


@functools.lru_cache(maxsize=64)
def _line_map(original: str, before: str) -> dict[int, int]:
    """1-based line in ``original`` -> the same line in ``before`` (earlier steps may have
    added or removed import lines); lines that changed map to where they are now."""
    a, b = original.split("\n"), before.split("\n")
    out: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        for k in range(i2 - i1):
            out[i1 + k + 1] = min(j1 + k, max(j2 - 1, j1)) + 1
    return out


def _map_line(original: str, before: str, line: int) -> int:
    return line if original is before else _line_map(original, before).get(line, line)


def _remap(found: list[Finding], original: str, before: str) -> list[Finding]:
    """The step's findings as they read in the text the step's patch applies to."""
    if original is before:
        return found
    lines = before.split("\n")
    out = []
    for f in found:
        line = _map_line(original, before, f.line)
        out.append(
            dataclasses.replace(
                f,
                line=line,
                end_line=f.end_line + line - f.line,
                source=lines[line - 1].strip() if line <= len(lines) else f.source,
            )
        )
    return out


def file_groups(order: list[str], by_rule, specs: dict[str, FixSpec]):
    """(step rules, rule -> the step rule it lands with, one group per step) for one file:
    rules that only work together (``targets.together``) land in the step of the earliest of
    their partners present, so every prefix of the series works."""
    host, tog = {}, together(specs)
    for r in order:
        partners = [p for p in order if p in tog.get(r, ())]
        if partners:
            host[r] = min(partners, key=order.index)
    steps = [r for r in order if r not in host]
    groups = [
        [
            (specs[x], frozenset(f.line for f in by_rule[x]))
            for x in [r, *sorted(k for k, h in host.items() if h == r)]
        ]
        for r in steps
    ]
    return steps, host, groups


def _file_steps(
    root: Path,
    path: str,
    rule_ids: list[str],
    all_rules: list[Rule],
    specs: dict[str, FixSpec],
    scan: ScanFn,
    plan: Plan,
    importers: Importers,
    package_prefix: str = "",
) -> dict[str, tuple]:
    """rule id -> (Rewrite, its findings) for one file, each step on top of the previous."""
    try:
        text, plan.modes[path] = _read(root, path)
    except (OSError, UnicodeDecodeError) as e:
        plan.errors.append(FileError(path, "read", str(e)))
        plan.unscanned[path] = f"cannot read the file: {e}"
        return {}
    plan.originals[path] = plan.finals[path] = text
    found, errs = scan(text.encode("utf-8"), path, all_rules, package_prefix=package_prefix)
    if errs:
        plan.unscanned[path] = f"the rescan failed: {errs[0].reason} {errs[0].detail}".rstrip()
        return {}
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in found:
        by_rule[f.rule].append(f)
    order = [r for r in rule_ids if by_rule.get(r)]
    steps, host, groups = file_groups(order, by_rule, specs)
    results = rewrite_steps(
        text,
        path,
        groups,
        findings=found,
        importer=importers.of(path),
        package_prefix=package_prefix,
    )
    out: dict[str, tuple] = {r: (None, []) for r in host}
    mine = [f for r in order for f in by_rule[r]]
    for r, res in zip(steps, results):
        # the sites the step decides: its rules' and those of a unit it holds (join_units)
        out[r] = (res, [f for f in mine if (f.rule, f.line) in res.sites])
    return out
