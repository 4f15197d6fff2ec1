"""The plan stage: from a scan report to a patch series, one patch per (subsystem, rule), at most
N files each.

Three steps, each once: queue (which rules each file is fixed for, in series order), files
(each file read, rescanned and analysed once: the intent gate, then its rules as steps on top
of each other, ``codemods.rewrite_steps``, every step's positions taken from the original text,
so an import added by an earlier patch never misplaces a later fix), series (the steps' results
accounted per finding and chunked into patches, in series order).
"""

from __future__ import annotations

import dataclasses
import functools
import traceback
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from audits.model import FileError, Finding
from patches.generate import (
    guard_merge,
    helper_rename,
    local_rename,
    message,
    project_style,
    pytorch_style,
    reached,
    torch_alias,
    torch_floor,
    tree_uses,
)
from patches.generate.codemods import FileOptions, FixSpec, rewrite_steps
from patches.generate.codemods.reexports import Importers
from patches.generate.codemods.tree_index import TreeIndex
from patches.generate.linediff import opcodes
from patches.generate.series import FileChange, Patch
from patches.generate.state import Left, Plan, Run
from patches.generate.targets import together

__all__ = ["Left", "Plan", "build", "file_groups", "file_steps"]


@dataclass
class _Queue:
    todo: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    # (path, rule) -> the report's findings
    reported: dict[tuple[str, str], list[Finding]] = field(
        default_factory=lambda: defaultdict(list)
    )
    rules_of: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _read(root: Path, rel: str) -> tuple[str, str]:
    p = root / rel
    if p.is_symlink() or not p.is_file():
        raise OSError("not a regular file")
    mode = "100755" if p.stat().st_mode & 0o111 else "100644"
    # newline="" semantics: bytes decoded as-is, so CRLF files round-trip untouched.
    return p.read_bytes().decode("utf-8"), mode


def build(run: Run) -> Plan:
    """Plan the series for ``run.report`` (a scan of ``run.settings.root``) with ``run.specs``
    (the rules this run may fix); ``run.skipped``: rule id -> why it is not fixed."""
    plan = Plan(errors=list(run.report.errors))
    unit = helper_rename.of(run)
    queue = _queue(run, plan, unit)
    files = _rewrite_files(run, plan, queue)
    for subsystem, rule_id in sorted(queue.todo):
        changes = [
            change
            for path in sorted(queue.todo[(subsystem, rule_id)])
            for change in _account(plan, queue, files, path, rule_id)
        ]
        _patches(run, plan, changes, subsystem, rule_id)
    if unit is not None:
        _unit_patches(run, plan, unit)
    return plan


def _unit_patches(run: Run, plan: Plan, unit) -> None:
    """The private helper renames (``helper_rename``) as the first patches of the series: the
    definitions first, then the callers; every later patch of these files starts from them."""
    changes = []
    for path in unit.touches():
        if path not in plan.originals:
            try:
                plan.originals[path], plan.modes[path] = _read(run.settings.root, path)
            except (OSError, UnicodeDecodeError) as e:
                plan.errors.append(FileError(path, "read", str(e)))
                continue
            plan.finals[path] = plan.originals[path]
        text = plan.originals[path]
        new = unit.start(path, text)
        if new == text:
            continue
        changes.append(FileChange(path, text, new, plan.modes[path]))
        if plan.finals[path] == text:  # no later patch changes the file
            plan.finals[path] = new
    if not changes:
        return
    step = run.settings.max_files
    chunks = [changes[i : i + step] for i in range(0, len(changes), step)]
    sites = [f for f in plan.fixed if unit.helper_at(f.path, f) is not None]
    patches = []
    for n, chunk in enumerate(chunks, 1):
        paths = {c.path for c in chunk}
        mine = [f for f in sites if f.path in paths]
        subject, body = unit.message(
            mine, run.settings.tree, run.settings.series, run.settings.devices
        )
        patches.append(
            Patch(subject + (f" (part {n}/{len(chunks)})" if len(chunks) > 1 else ""), body, chunk)
        )
    plan.patches[:0] = patches


def _queue(run: Run, plan: Plan, unit=None) -> _Queue:
    """Which files each (subsystem, rule) fixes; the findings of rules this run does not fix are
    left with the reason; per file, its rules in series order (a file's subsystem is fixed, so
    that is rule id order). ``unit``: the helper renames; the findings they fix are fixed. A use
    of a project wrapper (``tree_uses``) is left: it goes with its wrapper."""
    q = _Queue()
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for f in run.report.findings:
        by_path[f.path].append(f)
    taken = {p: unit.sites(p, fs) for p, fs in by_path.items()} if unit is not None else {}
    for f in sorted(run.report.findings, key=Finding.sort_key):
        if (f.rule, f.line, f.col) in taken.get(f.path, ()):
            plan.fixed.append(f)
            plan.fixed_at.add((f.path, f.rule, f.line, f.col))
        elif tree_uses.wrapper_of(f) is not None:  # the tree-level pass's: never rewritten
            plan.left.append(Left(f, tree_uses.REASON))
        elif f.rule in run.specs:
            q.todo[(f.subsystem, f.rule)].add(f.path)
            q.reported[(f.path, f.rule)].append(f)
        else:
            why = run.skipped.get(f.rule, "no codemod for this rule")
            also = unit.reason_for(f.path, f) if unit is not None else ""
            plan.left.append(Left(f, f"{why}; {also}" if also else why))
    for (_subsystem, rule_id), paths in sorted(q.todo.items()):
        for path in paths:
            q.rules_of[path].append(rule_id)
    return q


def _rewrite_files(run: Run, plan: Plan, q: _Queue) -> dict[str, dict[str, tuple]]:
    """path -> {rule id: (Rewrite or None, its findings)}: each file once, in series order."""
    importers = Importers(run.settings.root, run.audit.prefix, tree_index(run))
    out: dict[str, dict[str, tuple]] = {}
    for key in sorted(q.todo):
        for path in sorted(q.todo[key]):
            if path not in out:
                out[path] = _file_steps(run, plan, path, q.rules_of[path], importers)
    return out


def _account(plan: Plan, q: _Queue, files, path: str, rule_id: str):
    """Fixed and left for ``rule_id``'s findings in ``path``; the (FileChange, sites) it makes."""
    step = files[path].get(rule_id)
    reported = q.reported[(path, rule_id)]
    if step is None:  # unreadable now, or the rescan does not find them
        why = plan.unscanned.get(path, "the rescan of the file does not find it")
        plan.left += [Left(f, why) for f in reported]
        return []
    # A finding of a given report (``--report``) that the file's own rescan lacks: left.
    rescanned = {(f.rule, f.line, f.col) for _, fs in files[path].values() for f in fs}
    plan.left += [
        Left(f, "the rescan of the file does not find it")
        for f in reported
        if (f.rule, f.line, f.col) not in rescanned
    ]
    result, found = step
    if result is None:  # lands with another rule's step (targets.together)
        return []
    if result.error:
        plan.errors.append(FileError(path, "codemod", result.error))
        plan.left += [Left(f, result.error) for f in found]
        return []
    sites = _decided(plan, path, result, found)
    if not result.changed:
        return []
    plan.kept_imports += [
        (path, n, by) for n, by in result.kept_imports if (path, n, by) not in plan.kept_imports
    ]
    plan.finals[path] = result.after
    plan.renamed[(path, rule_id)] = result.renamed
    return [(FileChange(path, result.before, result.after, plan.modes[path]), sites)]


def _decided(plan: Plan, path: str, result, found: list[Finding]) -> list[Finding]:
    """The step's findings fixed (returned, and added to ``plan.fixed``) or left with why."""
    original = plan.originals[path]
    at = [(path, f.rule, f.line, f.col) for f in found]
    found = _remap(found, original, result.before)
    done = {(r, _map_line(original, result.before, line)) for r, line in result.outcome.applied}
    why = {
        (r, _map_line(original, result.before, line)): reason
        for r, line, reason in result.outcome.failed
    }
    sites = [f for f in found if (f.rule, f.line) in done]
    plan.fixed_at |= {k for k, f in zip(at, found) if (f.rule, f.line) in done}
    plan.left += [
        Left(f, why.get((f.rule, f.line), "no rewrite matched this site"))
        for f in found
        if (f.rule, f.line) not in done
    ]
    # A site may already be rewritten by an earlier step (a device-pick literal goes
    # with its is_available()): fixed, with nothing left to change here.
    plan.fixed += sites
    return sites


def _patches(run: Run, plan: Plan, changes, subsystem: str, rule_id: str) -> None:
    """``changes`` of one (subsystem, rule) as patches of at most ``max_files`` files."""
    rules, spec, s = run.audit.rules, run.specs[rule_id], run.settings
    step = s.max_files
    chunks = [changes[i : i + step] for i in range(0, len(changes), step)]
    named = message.display_new(spec)
    for n, chunk in enumerate(chunks, 1):
        sites = [x for _, xs in chunk for x in xs]
        old = message.display_old(spec, sites)
        also = [rules[r] for r in sorted({x.rule for x in sites} - {rule_id})]
        added = [ln for c, _ in chunk for ln in _added(c)]
        new = message.written(named, added)
        guarded = message.guard_only(new, added)
        shown = message.GUARD if guarded else new
        body = message.body(rules[rule_id], old, shown, sites, s.tree, s.series, s.devices, also)
        body = message.with_renames(
            body, [(c.path, r) for c, _ in chunk for r in plan.renamed.get((c.path, rule_id), [])]
        )
        where = message.place(subsystem, [c.path for c, _ in chunk])
        subject = message.subject(new, where, n, len(chunks), old if guarded else None)
        plan.patches.append(Patch(subject, body, [c for c, _ in chunk]))


def _added(change) -> list[str]:
    """The lines a file change adds."""
    a, b = change.before.split("\n"), change.after.split("\n")
    return [ln for tag, _, _, j1, j2 in opcodes(a, b) if tag != "equal" for ln in b[j1:j2]]


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
    run: Run, plan: Plan, path: str, rule_ids: list[str], importers: Importers
) -> dict[str, tuple]:
    """rule id -> (Rewrite, its findings) for one file read from the tree; {} when it cannot be
    read or rescanned (recorded in ``plan``)."""
    try:
        text, plan.modes[path] = _read(run.settings.root, path)
    except (OSError, UnicodeDecodeError) as e:
        plan.errors.append(FileError(path, "read", str(e)))
        plan.unscanned[path] = f"cannot read the file: {e}"
        return {}
    plan.originals[path] = plan.finals[path] = text
    found, errs = run.audit.rescan(text, path)
    if errs:
        plan.unscanned[path] = f"the rescan failed: {errs[0].reason} {errs[0].detail}".rstrip()
        return {}
    try:
        return file_steps(run, text, path, found, rule_ids, importers.of(path))
    except Exception as e:  # a fault of the codemod's own: this file left, the run goes on
        where = traceback.extract_tb(e.__traceback__)[-1]
        detail = f"{type(e).__name__}: {e} ({Path(where.filename).name}:{where.lineno})"
        plan.errors.append(FileError(path, "codemod-fault", detail))
        plan.unscanned[path] = f"the codemod failed on this file (a fault to report): {detail}"
        plan.finals[path] = text
        return {}


def file_steps(
    run: Run, text: str, path: str, found: list[Finding], rule_ids, importer=None, evidence=None
) -> dict[str, tuple]:
    """rule id -> (Rewrite, its findings) for one file's ``text`` and its rescan ``found``,
    each step on top of the previous (``rule_ids``: the rules to fix, in series order; the
    other rules of ``run.shadow`` are decided by the gate as an ``--unsafe-fixes`` run decides
    them, never rewritten). ``evidence``: filled with
    the gate's evidence for the sites it leaves (``--explain``)."""
    unit = helper_rename.of(run)
    taken = unit.sites(path, found) if unit is not None else set()
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in found:
        if (f.rule, f.line, f.col) not in taken:  # the helper rename's (its own patch)
            by_rule[f.rule].append(f)
    order = [r for r in rule_ids if by_rule.get(r)]
    steps, host, groups = file_groups(order, by_rule, run.specs)
    shadow = [r for r in sorted(by_rule) if r in run.shadow]
    options = FileOptions(
        findings=found,
        shadow=tuple(file_groups(shadow, by_rule, run.shadow)[2]),
        importer=importer,
        package_prefix=run.audit.prefix,
        evidence=evidence,
        tree=tree_index(run),
        torch_floor=torch_floor.of(run),
        renamed=unit.renamed_names() if unit is not None else frozenset(),
    )
    results = rewrite_steps(text, path, groups, options=options)
    start = text
    if unit is not None and path in unit.touches():  # every step on top of the rename
        for r in results:
            try:
                if not r.error:
                    r.before = unit.apply(path, r.before, strict=True)
                    r.after = unit.apply(path, r.after, strict=True)
            except ValueError as e:  # never a step that would undo the rename
                r.error = str(e)
        start = unit.start(path, text)
    done: set = set()  # a local named for CUDA goes with the step that makes its code neutral
    for r in results:
        if r.changed:
            r.after, renamed = local_rename.rename(text, r.after, path)
            r.renamed = [x for x in renamed if x not in done]  # each step redoes the earlier
            done.update(renamed)
    style = project_style.style_for(run.settings.root, run.audit.prefix, path, text)
    _conform_each(path, text, results, style, start)
    out: dict[str, tuple] = {r: (None, []) for r in host}
    mine = [f for r in order for f in by_rule[r]]
    for r, res in zip(steps, results):
        # the sites the step decides: its rules' and those of a unit it holds (join_units)
        out[r] = (res, [f for f in mine if (f.rule, f.line) in res.sites])
    return out


def tree_index(run: Run) -> TreeIndex:
    """The run's scanned tree, for units that span files (built once per run; ``--explain``
    builds the same one, so it decides such units as ``generate`` does)."""
    if run.tree is None:
        run.tree = TreeIndex(run.settings.root, run.audit.prefix)
        reached.install(run, file_steps)  # what reached code keeps (``cuda-reached``)
    return run.tree


def _conform_each(path: str, text: str, results, style, start: str | None = None) -> None:
    """Every changing step of the file ends with neighbouring guards merged (``guard_merge``),
    torch spelled by the file's own alias (``torch_alias``), and in the file's ``style``
    (PyTorch's own, or its project's: ``project_style``) for every line the series has changed
    so far (``pytorch_style.conform`` of the original ``text`` and that step's text), and starts
    where the step before it ended: each patch passes the lint on its own and still applies on
    top of the one before; the last one ends where the series does. ``start``: the text the first
    step applies to (``text`` unless an earlier patch changed it)."""
    prev = text if start is None else start
    for r in results:
        if r.error:
            continue
        if r.after != r.before:
            merged = torch_alias.alias(text, guard_merge.merge(text, r.after))
            r.before, r.after = prev, pytorch_style.conform(path, text, merged, style)
        else:
            r.before = r.after = prev
        prev = r.after
