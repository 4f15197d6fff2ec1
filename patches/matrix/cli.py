"""The cross-device conformance matrix: upstream's OpInfo ``op_db`` on every device vs CPU.

    python -m patches.matrix [--devices cpu,trn[,cuda]] [--full | --ops a,b] [--dtypes ...]
                             [--tests FILE ...] [--out DIR]

Per (op, device, dtype): a status (pass/fail/error/refused/skip/xfail/absent) and sample counts;
``refused`` is the device's dtype policy declining the sample's dtype (documented, not an error). Each
device runs in its own subprocess (patches.matrix.opinfo_worker booted by device_boot); a worker that
crashes is restarted after the op it died in, which is recorded as ``error``. Upstream test files
given with ``--tests`` run through pytest on every device (patches.common.runner) and join the matrix as
rows. Writes matrix.json, matrix.md, matrix.junit.xml and matrix.html (self-contained) to --out.

Without --full/--ops it runs the fixed SMOKE_OPS subset in float32 (what ``make test`` checks).
Exit codes: 0 done (whatever the statuses: the matrix is a report), 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from patches.common.cli import ArgumentParser, UsageError, fail
from patches.common.outcome import Outcome
from patches.common.runner import boot_command, device_env, probe_all, run_logged, run_tests, tail
from patches.common.shard import ShardError
from patches.common.shard import parse as parse_shard
from patches.matrix.args import check_args
from patches.matrix.costs import cost_table
from patches.matrix.grid import pivot
from patches.matrix.html import render_html

SCHEMA = 1
SMOKE_OPS = (
    "abs",
    "add",
    "bernoulli",
    "cat",
    "clamp",
    "div",
    "exp",
    "matmul",
    "mean",
    "mm",
    "mul",
    "nn.functional.layer_norm",
    "nn.functional.relu",
    "softmax",
    "sum",
    "where",
)
FULL_DTYPES = "float32,bfloat16"
MAX_RESTARTS = 20
_COUNTS = ("samples", "passed", "failed", "errors", "skipped", "refused", "duration", "message")


@dataclass
class Cell:
    """One (op, device, dtype) entry of the matrix."""

    op: str
    device: str
    dtype: str
    status: str
    samples: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    refused: int = 0  # samples the device's dtype policy refused (status "refused")
    duration: float = 0.0
    message: str = ""

    def outcome(self) -> Outcome:
        return Outcome(
            f"opinfo::{self.op}::{self.dtype}",
            self.device,
            "after",
            self.status,
            self.duration,
            self.message,
        )


def _read_events(path: Path) -> list[dict]:
    events = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut short by a crash: everything before it is good
    return events


def run_device(
    device: str,
    dtypes: str,
    ops: list[str] | None,
    work: Path,
    *,
    max_samples: int,
    timeout: float,
    plugin: str | None = None,
    shards: tuple[str, ...] = (),
    tag: str = "",
    log=print,
) -> tuple[list[Cell], list[dict]]:
    """All cells for one available device; restarts the worker past an op that kills it.

    ``shards`` (``"I/N"`` specs, nested in order) restrict the ops to one shard of them."""
    out, skip = work / f"cells-{device}{tag}.jsonl", work / f"done-{device}{tag}.txt"
    out.unlink(missing_ok=True)
    skip.write_text("")
    cells: dict[tuple[str, str], Cell] = {}
    runs = []
    deadline = time.monotonic() + timeout
    for attempt in range(MAX_RESTARTS + 1):
        cmd = boot_command(device, plugin=plugin) + [
            "-m",
            "patches.matrix.opinfo_worker",
            "--device",
            device,
            "--dtypes",
            dtypes,
            "--out",
            str(out),
            "--skip",
            str(skip),
            "--max-samples",
            str(max_samples),
        ]
        if ops:
            cmd += ["--ops", ",".join(ops)]
        for spec in shards:
            cmd += ["--shard", spec]
        if plugin:
            cmd += ["--package", plugin]  # where the device declares its OpInfo skips
        left = deadline - time.monotonic()
        if left <= 0:
            break
        logf = work / f"worker-{device}{tag}-{attempt}.log"
        rc, dt = run_logged(cmd, work, device_env(device), left, logf)
        runs.append(
            {
                "device": device,
                "attempt": attempt,
                "rc": rc,
                "duration": round(dt, 2),
                "log_tail": tail(logf, 8),
            }
        )
        events = _read_events(out)
        pending = None
        for ev in events:
            if ev.get("event") == "start":
                pending = (ev["op"], ev["dtype"])
            elif ev.get("event") == "cell":
                key = (ev["op"], ev["dtype"])
                cells[key] = Cell(
                    ev["op"],
                    device,
                    ev["dtype"],
                    ev["status"],
                    **{k: ev[k] for k in _COUNTS if k in ev},
                )
                pending = None
        if events and events[-1].get("event") == "done":
            break
        if pending is None:  # died before any op (import/boot): nothing to skip past
            log(f"  {device}: worker exited {rc} before starting an op: {tail(logf, 1)}")
            break
        why = "timed out" if rc is None else f"worker died (rc {rc})"
        cells[pending] = Cell(
            pending[0],
            device,
            pending[1],
            "error",
            message=f"{why} in this op: {tail(logf, 1)}"[:300],
        )
        log(f"  {device}: {why} in {pending[0]} {pending[1]}; resuming after it")
        skip.write_text("".join(f"{o} {d}\n" for o, d in cells))
    return sorted(cells.values(), key=lambda c: (c.op, c.dtype)), runs


def build(
    devices: list[str],
    *,
    dtypes: str = "float32",
    ops: list[str] | None = None,
    tests: list[str] = (),
    max_samples: int = 1_000_000,
    timeout: float = 3600,
    plugins: dict[str, str] | None = None,
    work: Path | None = None,
    shard: str | None = None,
    workers: int = 1,
    log=None,
) -> dict:
    """Run the matrix; return its JSON-able form.

    ``shard`` ("I/N") runs one shard of the ops; ``workers`` > 1 splits a device's ops over that
    many worker processes (nested shards of the same cost-balanced assignment)."""
    log = log or (lambda m: print(m, file=sys.stderr))
    plugins = plugins or {}
    t0 = time.monotonic()
    work = Path(work or tempfile.mkdtemp(prefix="hn-matrix-"))
    work.mkdir(parents=True, exist_ok=True)
    cells: list[Cell] = []
    tests_out: list[Outcome] = []
    runs: list[dict] = []
    timings = {}
    infos = probe_all(devices, work=work, plugins=plugins, log=log)
    for dev in devices:
        if not infos[dev].available:
            continue
        t = time.monotonic()
        outer = (shard,) if shard else ()
        local = (
            [outer + (f"{j}/{workers}",) for j in range(1, workers + 1)] if workers > 1 else [outer]
        )
        with ThreadPoolExecutor(len(local)) as pool:
            parts = pool.map(
                lambda specs, dev=dev: run_device(
                    dev,
                    dtypes,
                    ops,
                    work,
                    max_samples=max_samples,
                    timeout=timeout,
                    plugin=plugins.get(dev),
                    shards=specs,
                    tag="".join(f"-{s.replace('/', 'of')}" for s in specs),
                    log=log,
                ),
                local,
            )
            dev_cells = []
            for part_cells, part_runs in parts:
                dev_cells += part_cells
                runs += part_runs
        cells += dev_cells
        for tf in tests:
            r = run_tests(
                Path.cwd(),
                [tf],
                dev,
                "after",
                workdir=work / "tests",
                plugin=plugins.get(dev),
                timeout=timeout,
            )
            tests_out += r.outcomes
            runs.append(r.to_dict())
        timings[dev] = round(time.monotonic() - t, 2)
        log(f"  {dev}: {len(dev_cells)} cells in {timings[dev]}s")
    # absent devices get an absent cell for every (op, dtype) the others produced
    keys = sorted({(c.op, c.dtype) for c in cells})
    for dev in devices:
        if not infos[dev].available:
            cells += [Cell(op, dev, dt, "absent", message=infos[dev].detail) for op, dt in keys]
    counts = {dev: {} for dev in devices}
    for c in cells:
        counts[c.device][c.status] = counts[c.device].get(c.status, 0) + 1
    return {
        "schema": SCHEMA,
        "tool": "patches.matrix",
        "torch": _torch_version(),
        "shard": dict(zip(("index", "count"), parse_shard(shard))) if shard else None,
        "devices": {d: infos[d].to_dict() for d in devices},
        "dtypes": dtypes.split(","),
        "ops": "all" if ops is None else list(ops),
        "max_samples": max_samples,
        "summary": counts,
        "device_seconds": timings,
        "cells": [asdict(c) for c in sorted(cells, key=lambda c: (c.op, c.dtype, c.device))],
        "tests": [o.to_dict() for o in tests_out],
        "runs": runs,
        "duration_s": round(time.monotonic() - t0, 2),
    }


def _torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return ""


# ---------------------------------------------------------------------------- views


def to_markdown(data: dict) -> str:
    cols, rows = pivot(data)
    lines = [
        "# OpInfo conformance matrix",
        "",
        "Each OpInfo sample run on the device and compared with CPU. Cell: status "
        "(passed/samples).",
        "",
        "| device | " + " | ".join(sorted({s for v in data["summary"].values() for s in v})) + " |",
    ]
    statuses = sorted({s for v in data["summary"].values() for s in v})
    if "refused" in statuses:
        lines[4:4] = [
            "`refused`: the device's dtype policy declined the sample's dtype "
            "(documented behaviour, not a conformance error).",
            "",
        ]
    lines.append("|---|" + "---|" * len(statuses))
    for dev, cnt in data["summary"].items():
        info = data["devices"][dev]
        label = dev if info["available"] else f"{dev} (absent: {info['detail']})"
        lines.append(f"| {label} | " + " | ".join(str(cnt.get(s, 0)) for s in statuses) + " |")
    lines += [
        "",
        "| op | " + " | ".join(f"{d} {t}" for d, t in cols) + " |",
        "|---|" + "---|" * len(cols),
    ]
    for op, cells in rows.items():
        out = []
        for k in cols:
            c = cells.get(k)
            if c is None:
                out.append("")
            elif c["samples"]:
                out.append(f"{c['status']} ({c['passed']}/{c['samples']})")
            else:
                out.append(c["status"])
        lines.append(f"| `{op}` | " + " | ".join(out) + " |")
    if data["tests"]:
        lines += ["", "| test | device | status |", "|---|---|---|"]
        lines += [f"| `{o['test']}` | {o['device']} | {o['status']} |" for o in data["tests"]]
    return "\n".join(lines) + "\n"


def to_junit(data: dict) -> str:
    """JUnit XML: one testsuite per device, one testcase per (op, dtype) and per test."""
    out = ['<?xml version="1.0" encoding="utf-8"?>', "<testsuites>"]
    for dev in data["devices"]:
        cases = [c for c in data["cells"] if c["device"] == dev]
        tests = [o for o in data["tests"] if o["device"] == dev]
        n_fail = sum(c["status"] in ("fail",) for c in cases + tests)
        n_err = sum(c["status"] in ("error",) for c in cases + tests)
        n_skip = sum(c["status"] in ("skip", "xfail", "refused", "absent") for c in cases + tests)
        out.append(
            f'<testsuite name={quoteattr("matrix." + dev)} tests="{len(cases) + len(tests)}"'
            f' failures="{n_fail}" errors="{n_err}" skipped="{n_skip}">'
        )
        items = [
            (f"opinfo.{dev}.{c['dtype']}", c["op"], c["status"], c["duration"], c["message"])
            for c in cases
        ]
        items += [
            (f"tests.{dev}", o["test"], o["status"], o["duration"], o["message"]) for o in tests
        ]
        for cls, name, status, dur, msg in items:
            out.append(
                f'  <testcase classname={quoteattr(cls)} name={quoteattr(name)} time="{dur:.4f}">'
            )
            tag = {
                "fail": "failure",
                "error": "error",
                "skip": "skipped",
                "xfail": "skipped",
                "refused": "skipped",
                "absent": "skipped",
            }.get(status)
            if tag:
                out.append(f"    <{tag} message={quoteattr(f'{status}: {msg}')}/>")
            out.append("  </testcase>")
        out.append("</testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def write_outputs(data: dict, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "matrix.json": json.dumps(data, indent=1) + "\n",
        "matrix.md": to_markdown(data),
        "matrix.junit.xml": to_junit(data),
        "matrix.html": render_html(data),
    }
    paths = []
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        paths.append(out / name)
    return paths


def merge_main(argv: list[str]) -> int:
    """``merge DIR... --out DIR``: the matrix of a whole run from its shards' outputs."""
    from patches.matrix import merge

    ap = ArgumentParser(prog="python -m patches.matrix merge", description=merge.__doc__)
    ap.add_argument("shards", nargs="+", help="--out folders (or matrix.json files) of the shards")
    ap.add_argument("--out", required=True, help="output folder for the merged matrix")
    a = ap.parse_args(argv)
    out = Path(a.out)
    try:
        if out.exists() and not out.is_dir():
            raise ShardError(f"--out {out}: exists and is not a folder")
        data = merge.merge(merge.load(a.shards))
    except ShardError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".hn-merge-", dir=out.parent) as tmp:
        paths = write_outputs(data, Path(tmp))  # complete before anything lands in --out
        out.mkdir(exist_ok=True)
        for p in paths:
            p.replace(out / p.name)
    print(
        f"matrix: {len(data['cells'])} cells merged from {data['merged_from']} shard(s) -> {out}",
        file=sys.stderr,
    )
    return 0


def costs_main(argv: list[str]) -> int:
    """``costs MATRIX.json [--out FILE]``: refresh the shard cost table from a (full) run."""
    from patches.matrix import merge
    from patches.matrix.costs import COSTS

    ap = argparse.ArgumentParser(
        prog="python -m patches.matrix costs", description=costs_main.__doc__
    )
    ap.add_argument("matrix", help="matrix.json (or its folder) of a run, ideally --full")
    ap.add_argument("--out", default=str(COSTS), help=f"cost table to write (default {COSTS})")
    a = ap.parse_args(argv)
    try:
        [(_, data)] = merge.load([a.matrix])
    except ShardError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    table = cost_table(data)
    Path(a.out).write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"costs: {len(table['seconds'])} ops -> {a.out}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["merge"]:
        return merge_main(argv[1:])
    if argv[:1] == ["costs"]:
        return costs_main(argv[1:])
    ap = ArgumentParser(prog="python -m patches.matrix", description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="cpu,trn")
    g = ap.add_mutually_exclusive_group()
    g.add_argument(
        "--full", action="store_true", help=f"every op of op_db in {FULL_DTYPES} (unless --dtypes)"
    )
    g.add_argument("--ops", help="comma list of op names (name or name.variant)")
    ap.add_argument("--dtypes", help="comma list (default float32; --full: float32,bfloat16)")
    ap.add_argument("--max-samples", type=int, default=1_000_000, help="samples per cell")
    ap.add_argument(
        "--tests",
        action="append",
        default=[],
        help="upstream test file to run on every device (repeatable)",
    )
    ap.add_argument("--plugin", action="append", default=[], metavar="DEVICE=MODULE")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per device")
    ap.add_argument("--out", default="matrix-out", help="output folder (default matrix-out)")
    ap.add_argument("--shard", metavar="I/N", help="run shard I of N (cost-balanced op split)")
    ap.add_argument(
        "--workers", type=int, default=1, help="worker processes per device (e.g. one per core)"
    )
    ap.add_argument("--work", help="keep worker logs in this folder")
    a = ap.parse_args(argv)
    try:  # every bad value is refused here, before any device runs or anything is written
        devices, dtypes, plugins, ops = check_args(a, SMOKE_OPS, FULL_DTYPES)
    except UsageError as e:
        return fail(e)
    try:
        if a.shard:
            parse_shard(a.shard)
        if a.workers < 1:
            raise ShardError(f"--workers {a.workers}: expected 1 or more")
    except ShardError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="hn-matrix-") as tmp:  # logs: keep with --work
        data = build(
            devices,
            dtypes=dtypes,
            ops=ops,
            tests=a.tests,
            max_samples=a.max_samples,
            timeout=a.timeout,
            plugins=plugins,
            work=Path(a.work or tmp),
            shard=a.shard,
            workers=a.workers,
        )
    paths = write_outputs(data, Path(a.out))
    for dev, cnt in data["summary"].items():
        print(f"{dev}: " + ", ".join(f"{k} {v}" for k, v in sorted(cnt.items())), file=sys.stderr)
    print(
        f"matrix: {len(data['cells'])} cells in {data['duration_s']}s -> "
        + ", ".join(str(p) for p in paths),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
