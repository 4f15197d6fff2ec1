"""The prove engine: per subsystem, generate its series (patches.prove.generation), select the
upstream tests (patches.prove.selection), validate before/after on every device
(patches.validate.run, through the shadow package of the installed torch) and write the bundle
``OUT/SUBSYSTEM/{series/,validation.md,validation.json}`` plus ``OUT/SUMMARY.md``."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from patches.prove.config import ProveError, Subsystem, subsystem_files
from patches.prove.generation import copy_series, generate
from patches.prove.opdb import check_op_database
from patches.prove.report.bundle import bundle_markdown, no_change_markdown
from patches.prove.report.summary import NO_CHANGE, summary_markdown
from patches.prove.selection import node_ids, select_tests
from patches.prove.testplan import Signature, plan_text
from patches.validate.checks import behaviour_lines
from patches.validate.options import ValidateOptions
from patches.validate.run import validate


@dataclass
class ProveOptions:
    """One prove run: ``subsystems`` (in order) into ``out``, their tests from ``test_root``."""

    subsystems: list[Subsystem]
    out: Path
    test_root: Path
    site: Path  # the folder holding the installed torch package
    devices: list[str]
    signature: Signature
    series: Path | None = None  # a given series instead of generating (one subsystem)
    xdist: int = 0
    coverage: bool = True
    timeout: float = 1200
    mutants: int = 3  # per hunk (patches.validate.mutation); 0: off
    oracle: bool = True  # the cpu behaviour oracle (patches.validate.oracle)


@dataclass
class _Prepared:
    """A subsystem's series and test selection, made before its validation."""

    files: list[str]
    nodes: list
    reasons: dict
    gen: object  # patches.prove.generation.Generated
    lines: list[str]  # its progress lines, printed when its validation starts
    seconds: float


def prove_all(opts: ProveOptions, log) -> list[dict]:
    """Every subsystem's bundle, SUMMARY.md rewritten after each, summary.json at the end.

    The next subsystem's series is generated (one thread, in order) while the current one is
    validated: generation is Python in this process, validation mostly waits for its pytest
    processes. A device found absent is not probed again for the next bundles."""
    opts.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    rows: list[dict] = []
    absent: dict[str, str] = {}
    with ThreadPoolExecutor(1) as pool:
        prepared = [pool.submit(_prepare, opts, sub) for sub in opts.subsystems]
        try:
            for sub, fut in zip(opts.subsystems, prepared):
                log(f"[{time.monotonic() - t0:.0f}s] {sub.name}")
                rows.append(prove_one(opts, sub, fut.result(), log, absent))
                (opts.out / "SUMMARY.md").write_text(
                    summary_markdown(rows, opts.devices, time.monotonic() - t0, opts.xdist)
                )
        finally:
            for fut in prepared:
                fut.cancel()
    (opts.out / "summary.json").write_text(json.dumps(rows, indent=2) + "\n")
    return rows


def _prepare(opts: ProveOptions, sub: Subsystem) -> _Prepared:
    t0 = time.monotonic()
    bundle = opts.out / sub.name
    if bundle.exists() and any(bundle.iterdir()):
        raise ProveError(f"{bundle} is not empty: give a new --out folder")
    files = subsystem_files(opts.site, sub)
    lines = [f"{sub.name}: {len(files)} file(s) of torch"]
    nodes, reasons = select_tests(sub, files, opts.test_root)
    if opts.series:
        gen = copy_series(opts.series, bundle)
    else:
        plan = plan_text(f"{sub.name}/series", opts.devices, nodes, sub.k)
        gen = generate(opts.site, files, bundle, opts.signature, plan)
        lines.append(f"  generate: {gen.summary.splitlines()[0]} ({time.monotonic() - t0:.1f}s)")
    return _Prepared(files, nodes, reasons, gen, lines, time.monotonic() - t0)


def prove_one(opts: ProveOptions, sub: Subsystem, prep: _Prepared, log, absent: dict) -> dict:
    """One bundle from its prepared series; ``absent`` (device -> why) is read and updated."""
    t0 = time.monotonic() - prep.seconds
    bundle = opts.out / sub.name
    for line in prep.lines:
        log(line)
    gen, nodes, reasons = prep.gen, prep.nodes, prep.reasons
    row = {
        "subsystem": sub.name,
        "title": sub.title,
        "paths": sub.paths,
        "patches": len(gen.patches),
        "findings": gen.findings,
        "status": "",
    }
    if not gen.patches:
        # torch is already device-neutral there: every site is left, each with its reason
        row.update(status=NO_CHANGE, seconds=round(time.monotonic() - t0, 1))
        (bundle / "validation.md").write_text(no_change_markdown(sub, gen.findings, gen.summary))
        (bundle / "validation.json").write_text(json.dumps({"prove": row}, indent=2) + "\n")
        return row
    if not nodes:
        raise ProveError(
            f"subsystem {sub.name}: no upstream test file under {opts.test_root} exercises it"
        )
    log(f"  tests: {'; '.join(f'{r} ({w})' for r, w in reasons.items())}")
    report = _validate(opts, sub, bundle, node_ids(opts.test_root, nodes), log, dict(absent))
    for dev, info in report["devices"].items():
        if not info["available"]:
            absent[dev] = info["detail"]
    report["prove"] = {"subsystem": sub.name, "selection": reasons, "k": sub.k}
    checked = check_op_database(opts.site, bundle / "series", opts.devices)
    if checked is not None:
        report["inputs"] = checked
        log(
            f"  op database: {', '.join(checked['files'])}: "
            f"{len(checked['regressions'])} regression(s) in the OpInfos' checks"
        )
    (bundle / "validation.json").write_text(json.dumps(report, indent=2) + "\n")
    (bundle / "validation.md").write_text(bundle_markdown(sub, gen.patches, report, reasons, nodes))
    row.update(
        _verdict(report),
        seconds=round(time.monotonic() - t0, 1),
        selection=reasons,
        k=sub.k,
        xdist=report["xdist"],
    )
    return row


def _validate(
    opts: ProveOptions, sub: Subsystem, bundle: Path, tests: list[str], log, absent: dict
) -> dict:
    return validate(
        ValidateOptions(
            tree="installed",
            series=str(bundle / "series"),
            devices=opts.devices,
            tests=tests,
            test_root=str(opts.test_root),
            timeout=opts.timeout,
            pytest_args=["-k", sub.k] if sub.k else [],
            xdist=opts.xdist,
            coverage=opts.coverage,
            mutants=opts.mutants,
            oracle=opts.oracle,
            absent=absent,
        ),
        log=log,
    )


def _input_regression(r: dict) -> dict:
    """An OpInfo check that regressed, as a comparison row of the summary."""
    return {
        "device": r["device"],
        "test": f"OpInfo {r['op']}: {r['what']}",
        "before": f"{r['before']['failed']} failed",
        "after": f"{r['after']['failed']} failed",
        "message": r["message"],
    }


def _regressed(c: dict) -> str:
    return (
        f"{c['device']}: `{c['test']}` ({c['before']} -> {c['after']}"
        + (f"; {c['message']}" if c.get("message") else "")
        + ")"
        + (f", ran {', '.join(c['hunks_run'])}" if c.get("hunks_run") else "")
    )


def _verdict(report: dict) -> dict:
    """A bundle's row of SUMMARY.md from its validation report."""
    s = report["summary"]
    regs = [c for c in report["comparisons"] if c["change"] == "regression"]
    regs += [_input_regression(r) for r in report.get("inputs", {}).get("regressions", [])]
    changed = s.get("behaviour_changed", 0)
    return {
        "hunks": s["hunks"],
        "hunks_proven": s["hunks_proven"],
        "verdicts": s.get("verdicts", {}),
        "behaviour_changed": changed,
        "behaviour": behaviour_lines(report),
        "bound": report.get("checks", {}).get("mutation", {}).get("bound_text", ""),
        "tests": len(report["comparisons"]),
        "gains": s["gain"],
        "regressions": s["regression"],
        "regressed": [_regressed(c) for c in regs],
        "incomplete": s.get("incomplete", []),
        "status": "REGRESSION"
        if regs
        else "INCOMPLETE"
        if s.get("incomplete")
        else "BEHAVIOUR"
        if changed
        else "ok",
        "devices": {
            d: (i["detail"] if i["available"] else f"absent: {i['detail']}")
            for d, i in report["devices"].items()
        },
    }
