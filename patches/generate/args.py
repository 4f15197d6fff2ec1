"""``patches.generate`` argument checks: bad values are refused before the scan, nothing written."""

from __future__ import annotations

import argparse

from audits.model import Report
from patches.common.cli import UsageError, input_dir, input_file, output_dir, parse_devices
from patches.generate import audit_io, torch_floor


def check_args(args: argparse.Namespace) -> Report | None:
    """Check every value; return the ``--report`` given (read and checked), else None."""
    input_dir("PATH", args.path)
    if args.force and not args.apply:
        raise UsageError("--force only applies to --apply (it allows a dirty git tree)")
    if args.out is not None:
        output_dir("--out", args.out)
        if args.out.is_dir() and any(args.out.glob("*.patch")):
            raise UsageError(
                f"--out {args.out} already holds a series; give an empty or new directory"
            )
    parse_devices(args.devices)
    if args.torch_floor not in ("auto", "none"):
        try:
            torch_floor.parse(args.torch_floor)
        except ValueError as e:
            raise UsageError(f"--torch-floor: {e}") from None
    if args.report is None:
        return None
    input_file("--report", args.report)
    try:
        return audit_io.read_report(args.report)
    except ValueError as e:
        raise UsageError(f"--report {e}") from None
