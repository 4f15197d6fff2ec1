"""The cross-device conformance matrix: upstream's OpInfo ``op_db`` on every device vs CPU.

    python -m patches.matrix [--devices cpu,trn[,cuda]] [--full | --ops a,b] [--dtypes ...]
                             [--tests FILE ...] [--out DIR]
    python -m patches.matrix merge DIR... --out DIR
    python -m patches.matrix costs MATRIX.json [--out FILE]
    python -m patches.matrix inputs BEFORE AFTER [--devices cpu,trn] [--json FILE]

Per (op, device, dtype): a status (pass/fail/error/refused/skip/xfail/absent) and sample counts;
``refused`` is the device's dtype policy declining the sample's dtype (documented, not an error). Each
device runs in its own subprocess (patches.matrix.opinfo_worker booted by device_boot); a worker that
crashes is restarted after the op it died in, which is recorded as ``error``. Upstream test files
given with ``--tests`` run through pytest on every device (patches.common.runner) and join the matrix as
rows. Writes matrix.json, matrix.md, matrix.junit.xml and matrix.html (self-contained) to --out.

Without --full/--ops it runs the fixed SMOKE_OPS subset in float32 (what ``make test`` checks).
Exit codes: 0 done (whatever the statuses: the matrix is a report), 2 bad input.

This module parses and prints; the engine is patches.matrix.run, the views patches.matrix.report.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from patches.common.cli import ArgumentParser, UsageError, fail
from patches.common.shard import ShardError
from patches.matrix.args import build_parser, to_options
from patches.matrix.costs import cost_table
from patches.matrix.report.write import write_outputs
from patches.matrix.run import build


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
    return _worker_failures(data)


def costs_main(argv: list[str]) -> int:
    """``costs MATRIX.json [--out FILE]``: refresh the shard cost table from a (full) run."""
    from patches.matrix import merge
    from patches.matrix.costs import COSTS

    ap = argparse.ArgumentParser(
        prog="python -m patches.matrix costs", description=costs_main.__doc__, allow_abbrev=False
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


def inputs_main(argv: list[str]) -> int:
    """``inputs BEFORE AFTER``: check a change to the op database with its OpInfos' own checks."""
    from patches.matrix import inputs

    ap = ArgumentParser(prog="python -m patches.matrix inputs", description=inputs.__doc__)
    ap.add_argument("before", help="a module of the op database as it is")
    ap.add_argument("after", help="the same file as the series leaves it")
    ap.add_argument("--module", help="its dotted name (default: from AFTER's path below torch/)")
    ap.add_argument("--devices", default="cpu,trn", help="comma list (default cpu,trn)")
    ap.add_argument("--dtypes", default="float32,bool", help="sample dtypes (default float32,bool)")
    ap.add_argument("--json", help="also write the report as JSON")
    ap.add_argument("--work", help="keep the workers' logs and results here")
    a = ap.parse_args(argv)
    try:
        for path in (a.before, a.after):
            if not Path(path).is_file():
                raise inputs.InputsError(f"{path}: no such file")
        report = inputs.check(
            Path(a.before),
            Path(a.after),
            a.devices.split(","),
            a.dtypes,
            a.work and Path(a.work),
            a.module,
        )
    except (inputs.InputsError, OSError, UnicodeDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    print(inputs.render(report), end="")
    return 1 if report["regressions"] else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["merge"]:
        return merge_main(argv[1:])
    if argv[:1] == ["inputs"]:
        return inputs_main(argv[1:])
    if argv[:1] == ["costs"]:
        return costs_main(argv[1:])
    a = build_parser(__doc__.split("\n\n")[0]).parse_args(argv)
    try:  # every bad value is refused here, before any device runs or anything is written
        opts = to_options(a)
    except UsageError as e:
        return fail(e)
    with tempfile.TemporaryDirectory(prefix="hn-matrix-") as tmp:  # logs: kept with --work
        data = build(replace(opts, work=Path(a.work or tmp)))
    paths = write_outputs(data, Path(a.out))
    for dev, cnt in data["summary"].items():
        print(f"{dev}: " + ", ".join(f"{k} {v}" for k, v in sorted(cnt.items())), file=sys.stderr)
    print(
        f"matrix: {len(data['cells'])} cells in {data['duration_s']}s -> "
        + ", ".join(str(p) for p in paths),
        file=sys.stderr,
    )
    return _worker_failures(data)


def _worker_failures(data: dict) -> int:
    """Exit 1 when a device's worker died before its first op: its empty column measured nothing."""
    for dev, why in data["worker_failures"].items():
        print(f"matrix: {dev}'s worker died before its first op: {why}", file=sys.stderr)
    return 1 if data["worker_failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
