"""The matrix engine: upstream's OpInfo ``op_db`` on every device vs CPU, plus upstream test files
run through pytest on every device (patches.common.runner). ``build(MatrixOptions)`` returns the
JSON-able matrix (``SCHEMA``); the command line is patches.matrix.cli."""

from __future__ import annotations

import importlib.metadata
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path

from patches.common.outcome import Outcome
from patches.common.runner import PytestRun, probe_all, run_tests
from patches.common.shard import parse as parse_shard
from patches.matrix.options import MatrixOptions
from patches.matrix.supervise import Cell, WorkerJob, run_device

SCHEMA = 1


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def _worker_jobs(opts: MatrixOptions, dev: str, work: Path) -> list[WorkerJob]:
    """The device's workers: one, or ``workers`` nested shards of the (outer) shard."""
    outer = (opts.shard,) if opts.shard else ()
    w = opts.workers
    local = [outer + (f"{j}/{w}",) for j in range(1, w + 1)] if w > 1 else [outer]
    base = WorkerJob(
        dev, opts.dtypes, opts.ops, work, opts.max_samples, opts.timeout, opts.plugins.get(dev)
    )
    return [
        replace(base, shards=specs, tag="".join(f"-{s.replace('/', 'of')}" for s in specs))
        for specs in local
    ]


def _run_device(opts: MatrixOptions, dev: str, work: Path, log) -> tuple[list, list, list]:
    """(cells, test outcomes, runs) of one available device."""
    jobs = _worker_jobs(opts, dev, work)
    cells, runs, outcomes = [], [], []
    with ThreadPoolExecutor(len(jobs)) as pool:
        for part_cells, part_runs in pool.map(lambda j: run_device(j, log=log), jobs):
            cells += part_cells
            runs += part_runs
    for tf in opts.tests:
        r = run_tests(
            Path.cwd(),
            [tf],
            dev,
            "after",
            PytestRun(work / "tests", plugin=opts.plugins.get(dev), timeout=opts.timeout),
        )
        outcomes += r.outcomes
        runs.append(r.to_dict())
    return cells, outcomes, runs


def build(opts: MatrixOptions, log=None) -> dict:
    """Run the matrix; return its JSON-able form."""
    log = log or _stderr
    t0 = time.monotonic()
    work = Path(opts.work or tempfile.mkdtemp(prefix="hn-matrix-"))
    work.mkdir(parents=True, exist_ok=True)
    cells: list[Cell] = []
    tests_out: list[Outcome] = []
    runs: list[dict] = []
    timings = {}
    infos = probe_all(opts.devices, work=work, plugins=opts.plugins, log=log)
    for dev in opts.devices:
        if not infos[dev].available:
            continue
        t = time.monotonic()
        dev_cells, outcomes, dev_runs = _run_device(opts, dev, work, log)
        cells += dev_cells
        tests_out += outcomes
        runs += dev_runs
        timings[dev] = round(time.monotonic() - t, 2)
        log(f"  {dev}: {len(dev_cells)} cells in {timings[dev]}s")
    # absent devices get an absent cell for every (op, dtype) the others produced
    keys = sorted({(c.op, c.dtype) for c in cells})
    for dev in opts.devices:
        if not infos[dev].available:
            cells += [Cell(op, dev, dt, "absent", message=infos[dev].detail) for op, dt in keys]
    counts = {dev: {} for dev in opts.devices}
    for c in cells:
        counts[c.device][c.status] = counts[c.device].get(c.status, 0) + 1
    return {
        "schema": SCHEMA,
        "tool": "patches.matrix",
        "torch": _torch_version(),
        "shard": dict(zip(("index", "count"), parse_shard(opts.shard))) if opts.shard else None,
        "devices": {d: infos[d].to_dict() for d in opts.devices},
        "dtypes": opts.dtypes.split(","),
        "ops": "all" if opts.ops is None else list(opts.ops),
        "max_samples": opts.max_samples,
        "summary": counts,
        "device_seconds": timings,
        "cells": [asdict(c) for c in sorted(cells, key=lambda c: (c.op, c.dtype, c.device))],
        "tests": [o.to_dict() for o in tests_out],
        "runs": runs,
        # devices whose worker died before its first op: an empty column is a failure, not a result
        "worker_failures": {
            r["device"]: (r["log_tail"].splitlines() or [""])[-1]
            for r in runs
            if r.get("before_any_op")
        },
        "duration_s": round(time.monotonic() - t0, 2),
    }


def _torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return ""
