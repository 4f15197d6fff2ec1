"""``patches.matrix`` arguments: the parser, and the checks that refuse every bad value before any
device runs."""

from __future__ import annotations

import argparse

from patches.common.cli import (
    ArgumentParser,
    UsageError,
    close_matches,
    input_file,
    output_dir,
    parse_devices,
    parse_plugins,
    positive,
    split_csv,
)
from patches.common.shard import ShardError
from patches.common.shard import parse as parse_shard
from patches.matrix.options import FULL_DTYPES, SMOKE_OPS, MatrixOptions


def build_parser(description: str) -> ArgumentParser:
    ap = ArgumentParser(prog="python -m patches.matrix", description=description)
    ap.add_argument("--devices", default="cpu,trn", help="comma list (default cpu,trn)")
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
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="OpInfo worker processes per device (e.g. one per core; default 1)",
    )
    ap.add_argument(
        "--work",
        metavar="DIR",
        help="working folder for the worker logs, kept (default: a temporary folder, removed)",
    )
    return ap


def known_ops() -> set[str]:
    """Every op id of upstream's ``op_db``: ``name`` and ``name.variant`` (imports the database)."""
    from patches.matrix.opinfo_worker import op_db, op_id

    return {op.name for op in op_db} | {op_id(op) for op in op_db}


def check_ops(ops: list[str]) -> list[str]:
    if not ops:
        raise UsageError("--ops names no op (give e.g. --ops add,mul, or --full)")
    known = known_ops()
    for op in ops:
        if op not in known:
            raise UsageError(
                f"unknown op {op!r} in --ops (not in upstream's op_db: {len(known)} op ids, "
                f"name or name.variant){close_matches(op, known) or '; no close match'}"
            )
    return list(dict.fromkeys(ops))


def check_dtypes(value: str) -> str:
    import torch

    names = split_csv(value)
    if not names:
        raise UsageError(f"--dtypes {value!r} names no dtype")
    known = sorted(n for n in dir(torch) if isinstance(getattr(torch, n, None), torch.dtype))
    for d in names:
        if d not in known:
            raise UsageError(
                f"unknown dtype {d!r} in --dtypes (torch dtype names, e.g. float32,bfloat16)"
                + close_matches(d, known)
            )
    return ",".join(dict.fromkeys(names))


def to_options(a: argparse.Namespace) -> MatrixOptions:
    """The engine's options from the parsed arguments; raises UsageError on the first bad value."""
    devices, dtypes, plugins, ops = check_args(a, SMOKE_OPS, FULL_DTYPES)
    if a.shard:
        try:
            parse_shard(a.shard)
        except ShardError as e:
            raise UsageError(str(e)) from None
    if a.workers < 1:
        raise UsageError(f"--workers {a.workers}: expected 1 or more")
    return MatrixOptions(
        devices=devices,
        dtypes=dtypes,
        ops=ops,
        tests=list(a.tests),
        max_samples=a.max_samples,
        timeout=a.timeout,
        plugins=plugins,
        work=None,
        shard=a.shard,
        workers=a.workers,
    )


def check_args(a: argparse.Namespace, smoke_ops: tuple[str, ...], full_dtypes: str):
    """(devices, dtypes, plugins, ops or None for all) from the parsed arguments."""
    plugins = parse_plugins(a.plugin)
    devices = parse_devices(a.devices, plugins)
    dtypes = check_dtypes(
        a.dtypes if a.dtypes is not None else (full_dtypes if a.full else "float32")
    )
    positive("--max-samples", a.max_samples)
    positive("--timeout", a.timeout)
    for t in a.tests:
        input_file("--tests", t)
    output_dir("--out", a.out)
    if a.work:
        output_dir("--work", a.work)
    if a.full:
        ops = None
    elif a.ops is not None:
        ops = check_ops(split_csv(a.ops))
    else:
        ops = list(smoke_ops)
    return devices, dtypes, plugins, ops
