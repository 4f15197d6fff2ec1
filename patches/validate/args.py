"""``patches.validate`` arguments: the parser, and the checks that refuse bad values before any
clone or device run.

The series' content (empty, corrupt, no file changes) is checked by ``selection.series_files``
and the engine before any work starts; this module checks the values themselves.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from patches.common import runpool
from patches.common.cli import (
    ArgumentParser,
    UsageError,
    input_dir,
    output_dir,
    output_file,
    parse_devices,
    parse_plugins,
    positive,
)
from patches.common.shard import ShardError
from patches.common.shard import parse as parse_shard_spec
from patches.validate.options import ValidateOptions

OUTPUT_FLAGS = (("json", "--json"), ("junit", "--junit"), ("markdown", "--markdown"))


def add_report_outputs(ap: argparse.ArgumentParser, what: str = "also write") -> None:
    """``--json/--junit/--markdown FILE`` (the report's files); ``-o/--output`` is the old
    spelling of ``--json``, kept hidden."""
    ap.add_argument("--json", metavar="FILE", help=f"{what} the JSON report to this file")
    ap.add_argument("-o", "--output", dest="json", help=argparse.SUPPRESS)
    ap.add_argument("--junit", metavar="FILE", help=f"{what} the JUnit XML (a suite per device)")
    ap.add_argument("--markdown", metavar="FILE", help=f"{what} the Markdown (a PR's test plan)")


def add_run_flags(ap: argparse.ArgumentParser) -> None:
    """How the pytest runs go: shared by ``patches.validate`` and ``patches.prove``."""
    ap.add_argument(
        "-n",
        "--xdist",
        default="auto",
        metavar="N|auto",
        help="pytest-xdist processes per pytest run: a number or 'auto' (default: the cores "
        "shared among the runs that go at once, from 4 cores up; else in the pytest process)",
    )
    ap.add_argument(
        "--no-coverage",
        action="store_true",
        help="skip per-hunk device coverage (coverage.py, one context per test)",
    )
    ap.add_argument(
        "--mutants",
        type=int,
        default=3,
        metavar="N",
        help="mutants per hunk for the mutation check (default 3; 0: off, nothing is proven)",
    )
    ap.add_argument(
        "--no-oracle",
        action="store_true",
        help="do not record and compare what the changed functions return on cpu",
    )


def build_parser(description: str) -> ArgumentParser:
    ap = ArgumentParser(
        prog="python -m patches.validate",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--tree", required=True, help="the project checkout the series applies to, or 'installed'"
    )
    ap.add_argument(
        "--series",
        required=True,
        help="series folder (quilt 'series' file or *.patch) or one patch/mbox file",
    )
    ap.add_argument("--devices", default="cpu,trn", help="comma list (default cpu,trn)")
    ap.add_argument(
        "--tests",
        action="append",
        default=[],
        help="test files to run instead of the automatic selection (repeatable, "
        "comma lists allowed); relative to --tree, or paths with --tree installed",
    )
    ap.add_argument(
        "--test-root",
        help="with --tree installed: the folder the series' test "
        "paths are relative to (default: the folder holding the tests' test/ dir)",
    )
    ap.add_argument("--rev", default="HEAD", help="git revision the series applies to")
    ap.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="DEVICE=MODULE",
        help="module that registers a PrivateUse1 DEVICE (trn=kernels.trn built in)",
    )
    ap.add_argument(
        "--format",
        choices=("auto", "table", "json", "markdown"),
        default="auto",
        help="stdout format; auto = table on a TTY, JSON otherwise",
    )
    add_report_outputs(ap)
    add_run_flags(ap)
    _add_scheduling(ap)
    return ap


def _add_scheduling(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "-j",
        "--jobs",
        default="auto",
        metavar="N|auto",
        help="(device, phase) pytest runs at once: a number or 'auto' (default: one per core, "
        "a run on N xdist processes counting as N)",
    )
    ap.add_argument(
        "--shard",
        metavar="I/N",
        help="run the I-th of N deterministic shares of the selected test files "
        "(join the shard reports with `python -m patches.validate merge`)",
    )
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per pytest run")
    ap.add_argument("--pytest-arg", action="append", default=[], help="extra pytest argument")
    ap.add_argument(
        "--work",
        metavar="DIR",
        help="working folder for the scratch trees and logs, kept (default: a new temporary "
        "folder, removed at the end unless --keep)",
    )
    ap.add_argument("--scratch", dest="work", help=argparse.SUPPRESS)
    ap.add_argument("--keep", action="store_true", help="keep the temporary working folder")


def check_args(a: argparse.Namespace) -> tuple[dict[str, str], list[str]]:
    """(plugins, devices) from the parsed arguments; raises UsageError on the first bad value."""
    plugins = parse_plugins(a.plugin)
    devices = parse_devices(a.devices, plugins)
    for flag, value in (("--tree", a.tree), ("--series", a.series)):
        if not value.strip():
            raise UsageError(f"{flag} is empty (see --help)")
    if a.tree != "installed":
        input_dir("--tree", a.tree)
    if a.test_root and a.tree != "installed":
        raise UsageError(f"--test-root {a.test_root} applies only with --tree installed")
    if a.test_root:
        input_dir("--test-root", a.test_root)
    series = Path(a.series)
    if not series.exists():
        raise UsageError(
            f"--series {a.series}: no such file or directory (a series folder or a patch)"
        )
    if series.is_dir():
        input_dir("--series", series)
    positive("--timeout", a.timeout)
    if a.mutants < 0:
        raise UsageError(f"--mutants {a.mutants}: a number >= 0")
    check_outputs(a)
    if a.work:
        output_dir("--work", a.work)
    return plugins, devices


def check_outputs(a: argparse.Namespace) -> None:
    """``--json/--junit/--markdown``: writable files, no two the same."""
    seen: dict[Path, str] = {}
    for attr, flag in OUTPUT_FLAGS:
        value = getattr(a, attr, None)
        if value:
            path = output_file(flag, value).resolve()
            if path in seen:
                raise UsageError(f"{flag} {value}: the same file as {seen[path]}")
            seen[path] = flag


def to_options(a: argparse.Namespace) -> ValidateOptions:
    """The engine's options from checked arguments; raises UsageError on a bad number."""
    plugins, devices = check_args(a)
    return ValidateOptions(
        tree=a.tree,
        series=a.series,
        devices=devices,
        tests=[t for item in a.tests for t in item.split(",") if t],
        rev=a.rev,
        test_root=a.test_root,
        plugins=plugins,
        work=a.work,
        keep=a.keep,
        timeout=a.timeout,
        pytest_args=list(a.pytest_arg),
        xdist=parse_xdist(a.xdist),
        coverage=not a.no_coverage,
        shard=parse_shard(a.shard) if a.shard else None,
        jobs=parse_jobs(a.jobs),
        mutants=a.mutants,
        oracle=not a.no_oracle,
    )


def parse_xdist(spec: str) -> int:
    """``auto`` -> ``runpool.AUTO_XDIST``: each validation shares the cores among its runs
    (``runpool.split_cores``; the pytest process itself below 4 cores). ``0``/``1`` -> no
    xdist; N -> N workers for every run."""
    if str(spec) == "auto":
        return runpool.AUTO_XDIST
    try:
        n = int(spec)
    except ValueError:
        n = -1
    if n < 0:
        raise UsageError(f"bad --xdist {spec!r}: a number >= 0 or 'auto'")
    return n


def parse_jobs(spec: str) -> int:
    """``auto`` -> 0 (the engine then runs one per core, see runpool.default_slots); else N >= 1."""
    if str(spec) == "auto":
        return 0
    try:
        n = int(spec)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError(f"bad --jobs {spec!r}: a number >= 1 or 'auto'")
    return n


def parse_shard(spec: str) -> tuple[int, int]:
    try:
        return parse_shard_spec(spec)
    except ShardError as e:
        raise UsageError(f"--shard: {e}") from None
