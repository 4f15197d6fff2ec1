"""``patches.prove`` arguments: the parser, and the checks that refuse bad values before anything
is generated, run or written."""

from __future__ import annotations

import argparse
from pathlib import Path

from patches.common.cli import (
    ArgumentParser,
    UsageError,
    input_file,
    output_dir,
    parse_devices,
    positive,
    split_csv,
)
from patches.prove.config import CONFIG, ProveError, Subsystem, load_config
from patches.validate.args import add_run_flags

PROJECT = Path(__file__).resolve().parents[2]
DEFAULT_TEST_ROOT = PROJECT.parent / "shared" / "upstream" / "pytorch-tests"


def build_parser(description: str) -> ArgumentParser:
    ap = ArgumentParser(
        prog="python -m patches.prove",
        description=description,
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
    add_run_flags(ap)
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per pytest run")
    ap.add_argument(
        "--reproducible",
        action="store_true",
        help="fixed author and date in the patches (default: your git identity and now)",
    )
    return ap


def check_args(a: argparse.Namespace) -> list[str]:
    """The devices; raises UsageError on the first bad value."""
    devices = parse_devices(a.devices)
    output_dir("--out", a.out)
    input_file("--config", a.config)
    positive("--timeout", a.timeout)
    if a.mutants < 0:
        raise UsageError(f"--mutants {a.mutants}: a number >= 0")
    if a.series and not Path(a.series).exists():
        raise UsageError(f"--series {a.series}: no such file or directory (a series folder)")
    return devices


def chosen_subsystems(a: argparse.Namespace) -> list[Subsystem]:
    """The subsystems to prove, in order; raises ProveError on an unknown name."""
    subs = load_config(Path(a.config))
    names = split_csv(a.subsystems) or [n for n, s in subs.items() if s.default]
    unknown = [n for n in names if n not in subs]
    if unknown:
        raise ProveError(f"unknown subsystem(s) {', '.join(unknown)}; known: {', '.join(subs)}")
    if a.series and len(names) != 1:
        raise ProveError("--series validates one subsystem: give --subsystems NAME")
    return [subs[n] for n in names]


def test_root(a: argparse.Namespace) -> Path:
    root = Path(a.test_root) if a.test_root else DEFAULT_TEST_ROOT
    if not root.is_dir():
        raise ProveError(
            f"no upstream test files at {root}"
            + (" (the ../shared folder beside the project is missing)" if not a.test_root else "")
            + "; point --test-root at a PyTorch checkout's test/ folder, e.g. "
            "`make prove ARGS='--test-root ~/src/pytorch/test'`"
        )
    return root.resolve()
