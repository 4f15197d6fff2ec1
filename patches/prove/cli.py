"""Prove series on PyTorch's own code with PyTorch's own tests: one PR bundle per subsystem.

    python -m patches.prove [--out DIR] [--subsystems a,b] [--test-root DIR] [--devices cpu,trn,cuda]

For each subsystem of ``subsystems.yaml``: scan its files of the installed torch, generate the
series for them only (safe + review fixes, as ``patches.generate --unsafe-fixes``; or take
``--series DIR`` for one subsystem), select the upstream test files that exercise it (import
analysis plus the committed map), validate before/after on every device through the shadow
package (``patches.validate --tree installed``) with per-hunk device coverage, and write
``DIR/SUBSYSTEM/{series/,validation.md,validation.json}`` plus ``DIR/SUMMARY.md``.

Exit codes: 0 every bundle has no regression; 1 a regression (the patch and its failing tests are
named on stderr and in SUMMARY.md) or a device run that timed out or crashed (INCOMPLETE: no
verdict); 2 bad input (unknown subsystem, missing test root, a series
that does not apply).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from patches.common.cli import (
    ArgumentParser,
    UsageError,
    fail,
    input_file,
    output_dir,
    parse_devices,
    positive,
)
from patches.validate import cli as vcli
from patches.validate import selection, shadow

CONFIG = Path(__file__).with_name("subsystems.yaml")
PROJECT = Path(__file__).resolve().parents[2]
DEFAULT_TEST_ROOT = PROJECT.parent / "shared" / "upstream" / "pytorch-tests"


NO_CHANGE = "no change needed"  # status of a subsystem whose series is empty


class ProveError(ValueError):
    """Bad input: exit 2 with this message."""


@dataclass
class TestEntry:
    file: str
    nodes: list[str] = field(default_factory=list)
    why: str = ""
    skip: bool = False  # selected by import but not run (the reason says why)


@dataclass
class Subsystem:
    name: str
    title: str
    paths: list[str]
    tests: list[TestEntry]
    k: str = ""
    default: bool = True
    why: str = ""  # why it is (not) a default: shown in its bundle


def load_config(path: Path = CONFIG) -> dict[str, Subsystem]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ProveError(f"{path}: cannot read the subsystem list ({e})") from None
    out = {}
    for name, d in (data or {}).get("subsystems", {}).items():
        if not d.get("paths"):
            raise ProveError(f"{path}: subsystem {name} has no paths")
        ks = [t.get("k") for t in d.get("tests", []) if t.get("k")]
        out[name] = Subsystem(
            name,
            d.get("title", name),
            list(d["paths"]),
            [
                TestEntry(
                    t["file"],
                    list(t.get("nodes", [])),
                    " ".join(str(t.get("why", "")).split()),
                    bool(t.get("skip", False)),
                )
                for t in d.get("tests", [])
            ],
            " or ".join(f"({k})" for k in ks) if len(ks) > 1 else (ks[0] if ks else ""),
            bool(d.get("default", True)),
            " ".join(str(d.get("why", "")).split()),
        )
    return out


# ------------------------------------------------------------------------------- generation


def subsystem_files(site: Path, sub: Subsystem) -> list[str]:
    files = []
    for p in sub.paths:
        base = site / p
        if base.is_file():
            files.append(p)
        elif base.is_dir():
            files += sorted(f.relative_to(site).as_posix() for f in base.rglob("*.py"))
        else:
            raise ProveError(f"subsystem {sub.name}: {p} is not in the installed torch ({site})")
    return files


def generate(site: Path, files: list[str], out: Path, log) -> dict:
    """The series for ``files`` only: a scan report of them, then ``patches.generate``."""
    from audits.model import Report
    from patches.generate import audit_io

    rules = list(audit_io.load_rules().values())
    report = Report(root=str(site))
    for rel in files:
        found, errors = audit_io.scan_source((site / rel).read_bytes(), rel, rules)
        report.findings += found
        report.errors += errors
        report.files_scanned += 1
    out.mkdir(parents=True, exist_ok=True)
    scan = out / "scan.json"
    scan.write_text(json.dumps(report.to_dict(), indent=1))
    cmd = [
        sys.executable,
        "-m",
        "patches.generate",
        str(site),
        "--report",
        str(scan),
        "--out",
        str(out / "series"),
        "--unsafe-fixes",
    ]
    proc = subprocess.run(cmd, cwd=PROJECT, capture_output=True, text=True)
    scan.unlink()
    if proc.returncode != 0:
        raise ProveError(f"patches.generate failed (rc {proc.returncode}): {proc.stderr.strip()}")
    first = proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else ""
    log(f"  generate: {first}")
    return {
        "findings": len(report.findings),
        "generate_summary": proc.stderr.strip(),
        "patches": sorted(p.name for p in (out / "series").glob("*.patch")),
    }


# ------------------------------------------------------------------------------- selection


def module_name(rel: str) -> str:
    parts = list(Path(rel).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def select_tests(sub: Subsystem, files: list[str], test_root: Path) -> tuple[list[str], dict]:
    """Upstream test files (node ids) for the subsystem: by import, plus the committed map."""
    # only the full dotted names: torch/random.py is torch.random, never the stdlib's random
    targets = {module_name(f) for f in files}
    nodes: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for rel in selection.iter_test_files(test_root):
        try:
            mods = selection.imported_modules((test_root / rel).read_text(encoding="utf-8"), rel)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        hit = sorted(m for m in mods if m in targets)
        if hit:
            nodes[rel] = []
            reasons[rel] = f"imports {hit[0]}"
    for t in sub.tests:
        if not (test_root / t.file).is_file():
            raise ProveError(f"subsystem {sub.name}: {t.file} is not under --test-root {test_root}")
        if t.skip:  # import analysis found it, the map says it cannot reach the change
            nodes.pop(t.file, None)
            reasons[t.file] = f"not run: {reasons.get(t.file, 'map')}; {t.why or 'skip'}"
            continue
        if t.file in reasons and not t.nodes:
            reasons[t.file] += f"; map: {t.why}" if t.why else ""
            continue
        nodes[t.file] = list(t.nodes)
        why = f"map: {t.why}" if t.why else "map"
        reasons[t.file] = f"{reasons[t.file]}; {why}" if t.file in reasons else why
    for rel, ns in nodes.items():
        if ns:
            reasons[rel] += f" [selection: {', '.join(ns)}]"
    ids = [f"{test_root / rel}::{n}" for rel, ns in nodes.items() for n in ns] + [
        str(test_root / rel) for rel, ns in nodes.items() if not ns
    ]
    return ids, reasons


# ------------------------------------------------------------------------------- bundles


def bundle_markdown(sub: Subsystem, gen: dict, report: dict, reasons: dict, k: str) -> str:
    s = report["summary"]
    lines = [
        f"## Test plan: {sub.title}",
        "",
        f"Series: {len(gen['patches'])} patch(es) in `series/` for "
        + ", ".join(f"`{p}`" for p in sub.paths)
        + f" (torch {torch_version()}, generated with `patches.generate --unsafe-fixes`).",
        "",
        *([sub.why, ""] if sub.why else []),
        "Validated with upstream PyTorch's own tests, unmodified, before and after the series, "
        "on each device (`python -m patches.prove --subsystems " + sub.name + "`):",
        "",
    ]
    for rel, why in reasons.items():
        lines.append(f"- `test/{rel}`: {why}")
    if k:
        lines.append(f"- pytest `-k {k}` (a subset: see the reasons above)")
    lines += [
        "",
        f"Result: **{s['regression']} regression(s)**, {s['gain']} gain(s), "
        f"{s['unchanged']} unchanged."
        + (
            " **Incomplete, no verdict** (a run did not finish): " + "; ".join(s["incomplete"])
            if s.get("incomplete")
            else ""
        ),
        "",
    ]
    # what a reviewer reads first: which changed lines ran on which device, then every test
    lines += [*vcli.render_hunks_markdown(report), "", ""]
    return "\n".join(lines) + vcli.render_markdown(report, hunks=False)


def torch_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "?"


def prove_one(sub: Subsystem, args, site: Path, test_root: Path, out: Path, log) -> dict:
    t0 = time.monotonic()
    bundle = out / sub.name
    if bundle.exists() and any(bundle.iterdir()):
        raise ProveError(f"{bundle} is not empty: give a new --out folder")
    files = subsystem_files(site, sub)
    log(f"{sub.name}: {len(files)} file(s) of torch")
    if args.series:
        series = Path(args.series)
        patches = selection.series_files(series)
        (bundle / "series").mkdir(parents=True)
        for p in patches:
            (bundle / "series" / p.name).write_bytes(p.read_bytes())
        (bundle / "series" / "series").write_text("".join(p.name + "\n" for p in patches))
        gen = {
            "findings": None,
            "generate_summary": f"given: {series}",
            "patches": [p.name for p in patches],
        }
    else:
        gen = generate(site, files, bundle, log)
    row = {
        "subsystem": sub.name,
        "title": sub.title,
        "paths": sub.paths,
        "patches": len(gen["patches"]),
        "findings": gen["findings"],
        "status": "",
    }
    if not gen["patches"]:
        # torch is already device-neutral there: every site is left, each with its reason
        row.update(status=NO_CHANGE, seconds=round(time.monotonic() - t0, 1))
        (bundle / "validation.md").write_text(
            f"## {sub.title}\n\nNo change needed: the codemod leaves all {gen['findings']} "
            f"finding(s) in {', '.join(sub.paths)} of torch {torch_version()}, each with its "
            "reason below, so there is no series to validate."
            + (f"\n\n{sub.why}" if sub.why else "")
            + f"\n\n```\n{gen['generate_summary']}\n```\n"
        )
        (bundle / "validation.json").write_text(json.dumps({"prove": row}, indent=2) + "\n")
        return row
    tests, reasons = select_tests(sub, files, test_root)
    if not tests:
        raise ProveError(
            f"subsystem {sub.name}: no upstream test file under {test_root} exercises it"
        )
    log(f"  tests: {'; '.join(f'{r} ({w})' for r, w in reasons.items())}")
    pytest_args = ["-k", sub.k] if sub.k else []
    report = vcli.validate(
        "installed",
        str(bundle / "series"),
        args.devices,
        tests,
        test_root=str(test_root),
        timeout=args.timeout,
        pytest_args=pytest_args,
        workers=args.workers,
        coverage=not args.no_coverage,
        log=log,
    )
    report["prove"] = {"subsystem": sub.name, "selection": reasons, "k": sub.k}
    (bundle / "validation.json").write_text(json.dumps(report, indent=2) + "\n")
    (bundle / "validation.md").write_text(bundle_markdown(sub, gen, report, reasons, sub.k))
    s = report["summary"]
    tests_run = sum(1 for c in report["comparisons"])
    regs = [c for c in report["comparisons"] if c["change"] == "regression"]
    row.update(
        hunks=s["hunks"],
        hunks_proven=s["hunks_proven"],
        tests=tests_run,
        gains=s["gain"],
        regressions=s["regression"],
        regressed=[
            f"{c['device']}: `{c['test']}` ({c['before']} -> {c['after']}"
            + (f"; {c['message']}" if c.get("message") else "")
            + ")"
            + (f", ran {', '.join(c['hunks_run'])}" if c.get("hunks_run") else "")
            for c in regs
        ],
        incomplete=s.get("incomplete", []),
        status="REGRESSION" if regs else "INCOMPLETE" if s.get("incomplete") else "ok",
        seconds=round(time.monotonic() - t0, 1),
        devices={
            d: (i["detail"] if i["available"] else f"absent: {i['detail']}")
            for d, i in report["devices"].items()
        },
        selection=reasons,
        k=sub.k,
    )
    return row


def summary_markdown(rows: list[dict], devices: list[str], seconds: float, workers: int) -> str:
    lines = [
        "# patches.prove: summary",
        "",
        f"torch {torch_version()}; devices {', '.join(devices)}; pytest-xdist workers "
        f"{workers or 1}; {seconds:.0f}s in all.",
        "",
        "| subsystem | patches | hunks | hunks proven on "
        + " / ".join(devices)
        + " | tests run | gains | regressions | seconds | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["status"] == NO_CHANGE:
            lines.append(
                f"| {r['subsystem']} | 0 | - | - | - | - | - | {r['seconds']} | "
                f"{NO_CHANGE} ({r['findings']} findings, all left with reasons) |"
            )
            continue
        proven = " / ".join(str(r["hunks_proven"].get(d, 0)) for d in devices)
        lines.append(
            f"| {r['subsystem']} | {r['patches']} | {r['hunks']} | {proven} | {r['tests']} | "
            f"{r['gains']} | {r['regressions']} | {r['seconds']} | {r['status']} |"
        )
    absent = {
        d: w for r in rows for d, w in (r.get("devices") or {}).items() if w.startswith("absent")
    }
    for d, why in absent.items():
        lines.append(f"\n{d}: {why}")
    bad = [r for r in rows if r.get("regressed")]
    if bad:
        lines += ["", "## Regressions", ""]
        for r in bad:
            lines.append(f"- **{r['subsystem']}** (series `{r['subsystem']}/series/`):")
            lines += [f"  - {x}" for x in r["regressed"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(
        prog="python -m patches.prove",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--out", default="prove-out", help="bundle folder (default prove-out)")
    ap.add_argument(
        "--subsystems", default="", help="comma list from subsystems.yaml (default: the defaults)"
    )
    ap.add_argument("--config", default=str(CONFIG), help="subsystem list (YAML)")
    ap.add_argument(
        "--test-root",
        help="folder of upstream test files: a PyTorch checkout's test/ "
        f"(default {DEFAULT_TEST_ROOT})",
    )
    ap.add_argument("--devices", default="cpu,trn,cuda", help="comma list (default cpu,trn,cuda)")
    ap.add_argument("--series", help="validate this series instead of generating (one subsystem)")
    ap.add_argument("-n", "--workers", default="auto", help="pytest-xdist processes per run")
    ap.add_argument("--no-coverage", action="store_true", help="skip per-hunk device coverage")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per pytest run")
    a = ap.parse_args(argv)
    try:  # bad values are refused before anything is generated, run or written
        devices = parse_devices(a.devices)
        output_dir("--out", a.out)
        input_file("--config", a.config)
        positive("--timeout", a.timeout)
        if a.series and not Path(a.series).exists():
            raise UsageError(f"--series {a.series}: no such file or directory (a series folder)")
    except UsageError as e:
        return fail(e)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    try:
        subs = load_config(Path(a.config))
        names = [s.strip() for s in a.subsystems.split(",") if s.strip()] or [
            n for n, s in subs.items() if s.default
        ]
        unknown = [n for n in names if n not in subs]
        if unknown:
            raise ProveError(f"unknown subsystem(s) {', '.join(unknown)}; known: {', '.join(subs)}")
        if a.series and len(names) != 1:
            raise ProveError("--series validates one subsystem: give --subsystems NAME")
        test_root = Path(a.test_root) if a.test_root else DEFAULT_TEST_ROOT
        if not test_root.is_dir():
            raise ProveError(
                f"no upstream test files at {test_root}"
                + (
                    " (the ../shared folder beside the project is missing)"
                    if not a.test_root
                    else ""
                )
                + "; point --test-root at a PyTorch checkout's test/ folder, e.g. "
                "`make prove ARGS='--test-root ~/src/pytorch/test'`"
            )
        a.devices = devices
        a.workers = vcli.parse_workers(a.workers)
        site = shadow.installed_site()
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        rows = []
        for n in names:
            rows.append(prove_one(subs[n], a, site, test_root.resolve(), out, log))
            (out / "SUMMARY.md").write_text(
                summary_markdown(rows, a.devices, time.monotonic() - t0, a.workers)
            )
        (out / "summary.json").write_text(json.dumps(rows, indent=2) + "\n")
    except (
        ProveError,
        vcli.ValidateError,
        selection.SeriesError,
        shadow.ShadowError,
        OSError,
    ) as e:
        return fail(e)
    print((out / "SUMMARY.md").read_text(), end="")
    regs = [r for r in rows if r.get("regressed")]
    for r in regs:
        for x in r["regressed"]:
            print(f"REGRESSION {r['subsystem']}: {x}", file=sys.stderr)
    partial = [r for r in rows if r.get("incomplete")]
    for r in partial:
        for x in r["incomplete"]:
            print(f"INCOMPLETE {r['subsystem']}: {x} (no verdict)", file=sys.stderr)
    return 1 if regs or partial else 0


if __name__ == "__main__":
    sys.exit(main())
