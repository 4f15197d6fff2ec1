"""The validation engine: the same tests before and after a series, on every device.

``validate(ValidateOptions)`` returns the JSON-able report (``REPORT_SCHEMA``): workspaces
(patches.validate.workspace), test selection (patches.validate.selection), one pytest subprocess
per (device, phase) through patches.common.runpool, before/after comparison
(patches.common.outcome) and per-hunk device coverage (patches.validate.hunks). A device that
cannot boot is an ``absent`` column. The command line is patches.validate.cli.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from patches.common import runpool
from patches.common.outcome import CHANGES, Outcome, compare
from patches.common.runner import DeviceInfo, PytestRun, RunResult, probe, run_tests
from patches.validate import checks, mutation, selection
from patches.validate import hunks as hunkcov
from patches.validate.options import ValidateError, ValidateOptions
from patches.validate.workspace import (
    Source,
    apply_series,
    make_workspaces,
    parse_selectors,
    resolve_source,
)

REPORT_SCHEMA = 1


@dataclass
class Validation:
    """The state of one validation as it goes: inputs, workspaces, selection, results."""

    opts: ValidateOptions
    src: Source
    patches: list[Path]
    touched: list[str]
    node_args: dict[str, list[str]]
    work: Path
    ws: dict[str, Path] = field(default_factory=dict)
    sel: selection.Selection = field(default_factory=selection.Selection)
    all_tests: list[str] = field(default_factory=list)
    measured: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    infos: dict = field(default_factory=dict)
    runs: list[RunResult] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    contexts: dict[str, dict] = field(default_factory=dict)
    outside: dict[str, dict] = field(default_factory=dict)  # lines run outside tests, per device
    cov_state: dict[str, str] = field(default_factory=dict)
    oracle_args: list[str] = field(default_factory=list)  # the cpu runs' behaviour oracle
    oracle_targets: dict = field(default_factory=dict)
    entries: list[dict] = field(default_factory=list)  # the hunks, with their verdicts
    checks: dict = field(default_factory=dict)
    xdist: int = 0  # pytest-xdist workers per run, as resolved from opts.xdist

    def node_ids(self, test: str) -> list[str]:
        return self.node_args.get(test, [test])


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def validate(opts: ValidateOptions, log=None) -> dict:
    """Run the whole validation; return the JSON-able report."""
    log = log or _stderr
    t0 = time.monotonic()
    patches = selection.series_files(Path(opts.series))
    texts = [p.read_text(errors="replace") for p in patches]
    touched = list(dict.fromkeys(t for text in texts for t in selection.touched_paths(text)))
    if not touched:
        raise ValidateError(f"{opts.series}: no file changes found in the series")
    selectors = parse_selectors(opts.tests)
    src = resolve_source(opts, touched, [Path(t) for t in selectors])
    node_args = {
        rel: [f"{rel}::{n}" for n in selectors[f]] or [rel]
        for rel, f in zip(src.test_rels, selectors)
    }
    keep = opts.keep or opts.work is not None
    work = Path(opts.work) if opts.work else Path(tempfile.mkdtemp(prefix="hn-validate-"))
    work.mkdir(parents=True, exist_ok=True)
    v = Validation(opts, src, patches, touched, node_args, work, warnings=list(src.warnings))
    try:
        _prepare(v, log)
        _run(v, log)
        _check(v, log)
        report = _report(v)
        report["work"] = str(work) if keep else None
        report["duration_s"] = round(time.monotonic() - t0, 2)
        return report
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def _prepare(v: Validation, log) -> None:
    """Workspaces, the series onto ``after/``, the test selection (and its shard)."""
    v.ws = make_workspaces(v.src, v.work, v.touched)
    v.warnings += apply_series(v.ws["after"], v.patches, v.src.kind)
    v.sel = selection.select_tests([v.ws["before"], v.ws["after"]], v.touched, v.src.test_rels)
    if not v.sel.tests:
        raise ValidateError(
            "no tests selected: the series touches no test file and no test "
            "imports a touched module; pass --tests"
        )
    for rel, why in v.sel.unreadable.items():
        v.warnings.append(f"{rel}: not searched for imports ({why})")
    v.all_tests = list(v.sel.tests)
    shard = v.opts.shard
    if shard:
        v.sel.tests = selection.shard_tests(v.sel.tests, shard, v.ws["after"])
        log(f"shard {shard[0]}/{shard[1]}: {len(v.sel.tests)} of {len(v.all_tests)} test file(s)")
    for w in v.warnings:
        log(f"warning: {w}")
    log(
        f"validate: {len(v.patches)} patch(es), {len(v.sel.tests)} test file(s), "
        f"devices {','.join(v.opts.devices)}, working folder {v.work}"
    )
    v.measured = [
        t
        for t in v.touched
        if t.endswith(".py") and not selection.is_test_file(t) and (v.ws["after"] / t).is_file()
    ]
    if v.opts.oracle and "cpu" in v.opts.devices:
        v.oracle_args, v.oracle_targets = checks.prepare_oracle(v.work, v.patches, v.ws["after"])


def _with_coverage(v: Validation, phase: str) -> bool:
    return v.opts.coverage and phase == "after" and bool(v.measured)


def _job(v: Validation, dev: str, ph: str, present: list[str]):
    """The runpool job of one (device, phase): its pytest run, rerun in one process when
    pytest-xdist itself fails."""
    opts = v.opts
    how = PytestRun(
        v.work / "runs",
        plugin=opts.plugins.get(dev),
        timeout=opts.timeout,
        pytest_args=[*opts.pytest_args, *(v.oracle_args if dev == "cpu" else ())],
        coverage_include=[v.ws[ph] / t for t in v.measured] if _with_coverage(v, ph) else (),
    )

    def run(**changes) -> RunResult:
        return run_tests(v.ws[ph], present, dev, ph, replace(how, **changes))

    def go(boot_info: Path):
        lines = []
        r = run(xdist=v.xdist, boot_info=boot_info)
        if v.xdist > 1 and r.rc not in (0, 1, 5, None):
            # pytest-xdist itself failed (a worker that could not start, INTERNALERROR):
            # that says nothing about the series; run once more in one process
            lines.append(f"  {dev} {ph}: xdist run failed (rc {r.rc}); rerunning in one process")
            r = run(boot_info=boot_info)
        extra = f", timed out in {', '.join(r.running)}" if r.running else ""
        lines.append(
            f"  {dev} {ph}: {len(r.outcomes)} tests in {r.duration:.1f}s (rc {r.rc}{extra})"
        )
        return r, lines

    return go


def _workers(opts: ValidateOptions, runs: int) -> tuple[int, int]:
    """(xdist workers per run, runs at once) for ``runs`` (device, phase) runs."""
    if opts.xdist == runpool.AUTO_XDIST:
        xdist, slots = runpool.split_cores(min(runs, opts.jobs) if opts.jobs else runs)
        return xdist, opts.jobs or slots
    xdist = opts.xdist if opts.xdist > 1 else 0
    return xdist, opts.jobs or runpool.default_slots(xdist)


def _run(v: Validation, log) -> None:
    """Every (device, phase) run, each device probed by its first run; results into ``v``."""
    opts = v.opts
    known = {d: DeviceInfo(d, False, why) for d, why in opts.absent.items() if d in opts.devices}
    devices = [d for d in opts.devices if d not in known]
    plan = []  # (device, phase, present node ids), in the report's order
    for dev in devices:
        for ph in ("before", "after"):
            present = [n for t in v.sel.tests if (v.ws[ph] / t).is_file() for n in v.node_ids(t)]
            if present:
                plan.append((dev, ph, present))
    for dev, info in known.items():
        log(f"  {dev}: absent ({info.detail})")
    v.xdist, slots = _workers(opts, len(plan))
    infos, results = runpool.run_all(
        devices,
        [(dev, f"{ph}-{dev}", _job(v, dev, ph, present)) for dev, ph, present in plan],
        slots=slots,
        probe=lambda d: probe(
            d, cwd=v.work, plugin=opts.plugins.get(d), log=v.work / f"probe-{d}.log"
        ),
        log=log,
        records=v.work / "runs",
        # every device's before run first: the first run of a device is also its probe
        start_order=sorted(range(len(plan)), key=lambda i: (plan[i][1] != "before", i)),
    )
    v.infos = {d: known[d] if d in known else infos[d] for d in opts.devices}
    for (dev, ph, _present), r in zip(plan, results):
        if r is None:  # the device is absent
            continue
        v.runs.append(r)
        v.outcomes += r.outcomes
        if _with_coverage(v, ph):
            v.contexts[dev] = hunkcov.read_contexts(r.coverage_dir, v.ws[ph], set(v.measured))
            v.outside[dev] = hunkcov.lines_outside_tests(r.coverage_dir, v.ws[ph], set(v.measured))
            v.cov_state[dev] = "measured"
        elif ph == "after":
            v.cov_state[dev] = (
                "not measured: --no-coverage" if not opts.coverage else "not measured"
            )
    v.cov_state = {  # in the devices' order, as the report has always listed them
        d: v.cov_state[d] if v.infos[d].available else f"absent: {v.infos[d].detail}"
        for d in opts.devices
        if d in v.cov_state or not v.infos[d].available
    }


def _hunks(v: Validation) -> list[dict]:
    """Per-hunk device coverage: the tests that ran an added line, and which of them pass."""
    devices = v.opts.devices
    series_hunks = hunkcov.series_hunks(v.patches)
    hunkcov.attach_statements(series_hunks, v.ws["after"])
    passing, before = ({d: _passed(v, d, ph) for d in devices} for ph in ("after", "before"))
    states = {d: v.cov_state.get(d, "not measured") for d in devices}
    return hunkcov.hunk_coverage(series_hunks, v.contexts, passing, states, before)


def _passed(v: Validation, device: str, phase: str) -> set[str]:
    return {
        o.test for o in v.outcomes if o.device == device and o.phase == phase and o.status == "pass"
    }


def _check(v: Validation, log) -> None:
    """Coverage, then the CPU behaviour oracle and the mutation check: each hunk's verdict per
    device (patches.validate.checks)."""
    v.entries = _hunks(v)
    if v.oracle_targets:
        checks.attach_oracle(v.entries, v.work, v.oracle_targets, v.outcomes)
    mutated = v.opts.mutants > 0 and v.opts.coverage
    if mutated:
        bound = mutation.Options(max_mutants=v.opts.mutants)
        v.checks["mutation"] = checks.run_mutation(
            v.ws["after"], v.patches, v.entries, _MutantRuns(v), bound, v.sel.tests, log
        )
    v.checks.update(checks.finalize(v.entries, v.opts.devices, mutated))
    v.checks["oracle"] = {"enabled": bool(v.oracle_targets), "targets": v.oracle_targets}


class _MutantRuns:
    """The mutation check's pytest runs on the after tree (patches.validate.mutation): a fresh
    process for one mutant in place (``-x``: the first failure), or one process for a batch of
    a hunk's mutants put in place by code swaps (``hn_mutant_plugin``)."""

    def __init__(self, v: Validation):
        self.v = v

    def _how(self, tag: str, dev: str, timeout: float, extra: list[str]) -> PytestRun:
        return PytestRun(
            self.v.work / "mutants" / tag,
            plugin=self.v.opts.plugins.get(dev),
            timeout=timeout,
            pytest_args=[*self.v.opts.pytest_args, *extra],
        )

    def __call__(self, nodes: list[str], dev: str, tag: str, timeout: float) -> RunResult:
        return run_tests(
            self.v.ws["after"], nodes, dev, "after", self._how(tag, dev, timeout, ["-x"])
        )

    def ran_outside_tests(self, dev: str, path: str, lines: list[int]) -> bool:
        """Whether a line of ``lines`` ran outside any test on ``dev`` (or that is unknown)."""
        ran = self.v.outside.get(dev)
        return ran is None or bool(ran.get(path, set()) & set(lines))

    def batch(
        self, nodes: list[str], dev: str, tag: str, timeout: float, mutants: list[dict]
    ) -> dict[int, dict]:
        """Run ``mutants`` ({index, file, qualname, source text}) one after the other in one
        pytest process; {index: result} for each mutant the process finished."""
        folder = self.v.work / "mutants" / tag
        folder.mkdir(parents=True, exist_ok=True)
        spec_mutants = []
        for m in mutants:
            src = folder / f"mutant-{m['index']}.py"
            src.write_text(m["source"], encoding="utf-8")
            spec_mutants.append({**m, "source": str(src)})
        results = folder / "results.jsonl"
        results.unlink(missing_ok=True)
        spec = folder / "spec.json"
        spec.write_text(json.dumps({"results": str(results), "mutants": spec_mutants}))
        extra = ["-p", "hn_mutant_plugin", f"--hn-mutants={spec}"]
        run_tests(self.v.ws["after"], nodes, dev, "after", self._how(tag, dev, timeout, extra))
        out = {}
        if results.exists():
            for line in results.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                if "end" in rec:
                    out[rec["end"]] = rec
        return out


def _summary(v: Validation, comps, hunk_entries: list[dict]) -> dict:
    devices = v.opts.devices
    summary = {c: sum(1 for x in comps if x.change == c) for c in CHANGES}
    summary["by_device"] = {
        d: {c: sum(1 for x in comps if x.device == d and x.change == c) for c in CHANGES}
        for d in devices
    }
    # a run that timed out or crashed leaves tests absent: no verdict on its device
    summary["incomplete"] = [
        f"{r.device} {r.phase}: {r.incomplete}" for r in v.runs if r.incomplete
    ]
    summary["hunks"] = len(hunk_entries)
    summary["hunks_proven"] = v.checks["hunks_proven"]
    summary["verdicts"] = v.checks["verdicts"]
    summary["behaviour_changed"] = v.checks["behaviour_changed"]
    return summary


def _report(v: Validation) -> dict:
    opts, shard = v.opts, v.opts.shard
    comps = compare(v.outcomes)
    hunk_entries = v.entries
    comp_dicts = [c.to_dict() for c in comps]
    for c in comp_dicts:  # name the hunks a regressed test ran: the patch to look at
        if c["change"] == "regression":
            c["hunks_run"] = [
                h["key"]
                for h in hunk_entries
                if c["test"] in h["devices"].get(c["device"], {}).get("tests", ())
            ]
    return {
        "schema": REPORT_SCHEMA,
        "tool": "patches.validate",
        "tree": v.src.label(opts.tree),
        "kind": v.src.kind,
        "rev": opts.rev,
        "series": [str(p) for p in v.patches],
        "touched": v.touched,
        "devices": {d: v.infos[d].to_dict() for d in opts.devices},
        "selection": {
            **v.sel.to_dict(),
            "node_ids": {t: v.node_ids(t) for t in v.sel.tests},
            "shard": f"{shard[0]}/{shard[1]}" if shard else None,
            "all_tests": v.all_tests,
        },
        "pytest_args": list(opts.pytest_args),
        "test_root": str(v.src.test_root) if v.src.test_root else None,
        "xdist": v.xdist,
        "coverage": {
            "enabled": opts.coverage,
            "devices": v.cov_state,
            "measured_files": v.measured,
        },
        "hunks": hunk_entries,
        "checks": {k: v.checks[k] for k in ("mutation", "oracle") if k in v.checks},
        "warnings": v.warnings,
        "summary": _summary(v, comps, hunk_entries),
        "comparisons": comp_dicts,
        "outcomes": [o.to_dict() for o in v.outcomes],
        "runs": [r.to_dict() for r in v.runs],
    }
