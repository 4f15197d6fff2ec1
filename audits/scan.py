"""``python -m audits.scan [PATH]``: find CUDA-specific code; ``... diff OLD NEW`` compares reports.

With no PATH the installed PyTorch's own source tree is scanned (found without importing
torch). Exit codes: 0 scan completed; 1 with --fail-on-findings and findings present (for
``diff``: new findings); 2 usage error (bad path, selector, config or baseline).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from .baseline import BaselineError, apply_baseline, load_report
from .catalog import CatalogError, load, verify
from .config import ConfigError, load_config
from .engine import Options, run_scan
from .formats import FORMATS, render, summary_line
from .walk import DEFAULT_MAX_BYTES


class UsageError(Exception):
    pass


def _one_line(message: str) -> str:
    """Errors are one line: a newline (any unprintable character) in a value shows escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message.strip())


class OneLineParser(argparse.ArgumentParser):
    """One-line usage errors (exit 2), like every command of the toolkit: no usage block; no
    abbreviated flags (``--out`` is not ``--output``)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {_one_line(message)}; see --help\n")


def _check_output(output: str | None) -> None:
    """Refuse an output path that cannot be written before scanning (nothing is created)."""
    if not output:
        return
    parent = os.path.dirname(os.path.abspath(output))
    if os.path.isdir(output):
        raise UsageError(f"--output {output} is a directory; give a file path")
    if not os.path.isdir(parent):
        raise UsageError(f"--output {output}: no such directory {parent}")
    if not os.access(output if os.path.exists(output) else parent, os.W_OK):
        raise UsageError(f"--output {output}: not writable")


def torch_source_root() -> str:
    """The installed torch package directory, located without importing torch."""
    spec = importlib.util.find_spec("torch")
    locs = list(spec.submodule_search_locations or []) if spec else []
    if not locs:
        raise UsageError("no PATH given and no installed torch package found")
    return locs[0]


def _csv(values: list[str] | None) -> list[str]:
    return [v.strip() for item in (values or []) for v in item.split(",") if v.strip()]


def scan_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="python -m audits.scan",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", nargs="?", help="tree to scan (default: the installed torch package)")
    p.add_argument("--format", "-f", choices=FORMATS, default="table")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="rule ids, id prefixes (HN1), names, categories or ALL; comma-separated",
    )
    p.add_argument("--ignore", action="append", metavar="CODES", help="as --select, to leave out")
    p.add_argument(
        "--exclude", action="append", metavar="GLOB", help="paths to skip (relative globs)"
    )
    p.add_argument(
        "--language",
        action="append",
        choices=["python", "cpp", "cmake"],
        help="scan only these languages (default: all with a scanner)",
    )
    p.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: cores)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--cache-dir", help="cache location (default: $XDG_CACHE_HOME/hwneutral)")
    p.add_argument("--baseline", metavar="OLD.json", help="report only findings not in this report")
    p.add_argument("--fail-on-findings", action="store_true", help="exit 1 when findings remain")
    p.add_argument(
        "--max-file-size",
        type=int,
        default=None,
        metavar="BYTES",
        help=f"skip (and report) larger files (default {DEFAULT_MAX_BYTES})",
    )
    p.add_argument(
        "--show-findings",
        action="store_true",
        default=None,
        help="table format: list every finding, not only the counts",
    )
    p.add_argument("--no-progress", action="store_true", help="never draw a progress bar")
    p.add_argument(
        "--verify-catalog",
        action="store_true",
        help="check every replacement exists in the installed torch (imports torch), then exit",
    )
    return p


def diff_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="python -m audits.scan diff",
        description="Compare two JSON reports: new, fixed, existing findings.",
    )
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--format", "-f", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument(
        "--fail-on-findings", action="store_true", help="exit 1 when there are new findings"
    )
    return p


def _write(text: str, output: str | None) -> None:
    if output:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise UsageError(f"cannot write {output}: {e.strerror or e}") from None
    else:
        sys.stdout.write(text)


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    prog = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=None,
    )
    task = {}

    def update(done: int, total: int) -> None:
        if not task:
            prog.start()
            task["id"] = prog.add_task("scanning", total=total)
        prog.update(task["id"], completed=done)
        if done >= total:
            prog.stop()

    return update, prog


def main_scan(argv: list[str]) -> int:
    args = scan_parser().parse_args(argv)
    if args.verify_catalog:
        problems = verify(load())
        for p in problems:
            print(p, file=sys.stderr)
        print(f"catalogue: {len(load().rules)} rules, {len(problems)} problem(s)", file=sys.stderr)
        return 1 if problems else 0
    root = args.path or torch_source_root()
    if not os.path.isdir(root):
        raise UsageError(f"{root}: not a directory")
    cfg = load_config(root)
    cat = load()
    select = _csv(args.select) or cfg.select
    ignore = cfg.ignore + _csv(args.ignore)
    cat.check_selectors([*select, *ignore, *(c for v in cfg.per_file_ignores.values() for c in v)])
    if args.jobs < 0:
        raise UsageError(f"--jobs must be >= 0, got {args.jobs}")
    if args.max_file_size is not None and args.max_file_size < 1:
        raise UsageError(f"--max-file-size must be >= 1 byte, got {args.max_file_size}")
    _check_output(args.output)
    opts = Options(
        root=root,
        select=select,
        ignore=ignore,
        excludes=cfg.exclude + _csv(args.exclude),
        per_file_ignores=cfg.per_file_ignores,
        languages=args.language,
        jobs=args.jobs,
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        max_bytes=args.max_file_size or cfg.max_file_size or DEFAULT_MAX_BYTES,
    )
    baseline = load_report(args.baseline) if args.baseline else None
    tty = sys.stderr.isatty() and not args.no_progress and not os.environ.get("CI")
    update, prog = _progress() if tty else (None, None)
    try:
        report = run_scan(opts, progress=update, catalog=cat)
    finally:
        if prog is not None:
            prog.stop()
    if baseline is not None:
        report = apply_baseline(report, baseline)
    rules = cat.select(select, ignore)
    color = args.format == "table" and not args.output and sys.stdout.isatty()
    _write(
        render(report, args.format, rules, color=color, show_findings=args.show_findings),
        args.output,
    )
    if args.format != "table" or args.output:
        print(summary_line(report), file=sys.stderr)
    return 1 if args.fail_on_findings and report.findings else 0


def main_diff(argv: list[str]) -> int:
    from .diff import diff_reports
    from .diff import render as render_diff

    args = diff_parser().parse_args(argv)
    _check_output(args.output)
    d = diff_reports(load_report(args.old), load_report(args.new))
    _write(render_diff(d, args.format), args.output)
    return 1 if args.fail_on_findings and d["summary"]["new"] else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv[:1] == ["diff"]:
            return main_diff(argv[1:])
        return main_scan(argv)
    except (UsageError, CatalogError, ConfigError, BaselineError) as e:
        print(f"error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
