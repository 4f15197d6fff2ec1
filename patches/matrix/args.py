"""``patches.matrix`` argument checks: every bad value is refused before any device runs."""

from __future__ import annotations

import argparse

from patches.common.cli import (
    UsageError,
    close_matches,
    input_file,
    output_dir,
    parse_devices,
    parse_plugins,
    positive,
    split_csv,
)


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
