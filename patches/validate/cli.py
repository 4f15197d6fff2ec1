"""Prove a patch series: the same tests before and after it, on every device, in scratch copies.

    python -m patches.validate --tree PATH --series DIR [--devices cpu,trn[,cuda]] [--tests ...]
    python -m patches.validate merge SHARD.json ... [--json FILE] [--junit FILE] [--markdown FILE]

The user's tree is never touched: ``before/`` and ``after/`` are scratch clones (``git clone
--shared`` of HEAD, or a copy when the tree is not a git checkout); the series goes onto
``after/`` with ``git am`` (mbox patches) or ``git apply``. ``--tree installed`` validates the
installed torch through a shadow package (see patches.validate.shadow). Each (device, phase) runs in its
own pytest subprocess (see patches.common.runner). A device that cannot boot is an ``absent`` column.

Exit codes: 0 no regression; 1 at least one regression, or a run that timed out or crashed
(``summary.incomplete``: no verdict on its device); 2 bad input or the series does not apply.

This module parses and prints; the engine is patches.validate.run, the views patches.validate.report.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from patches.common.cli import UsageError, fail
from patches.validate import selection, shadow
from patches.validate.args import add_report_outputs, build_parser, to_options
from patches.validate.checks import behaviour_lines
from patches.validate.options import ValidateError
from patches.validate.report.junit import render_junit
from patches.validate.report.markdown import render_markdown
from patches.validate.run import validate


def merge_main(argv: list[str]) -> int:
    """``python -m patches.validate merge SHARD.json ...``: one report from the shards."""
    from patches.validate import merge as merging

    ap = argparse.ArgumentParser(
        prog="python -m patches.validate merge",
        description=merging.__doc__.split("\n\n")[0],
        allow_abbrev=False,
    )
    ap.add_argument("reports", nargs="+", help="the JSON report (--json) of every shard")
    add_report_outputs(ap, "write the merged")
    ap.add_argument("--format", choices=("json", "markdown"), default="markdown", help="stdout")
    a = ap.parse_args(argv)
    try:
        report = merging.merge(merging.load(a.reports))
    except merging.MergeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    write_outputs(report, a.json, a.junit, a.markdown)
    print(json.dumps(report, indent=2) if a.format == "json" else render_markdown(report), end="")
    return verdict(report)


def verdict(report: dict) -> int:
    """Exit code: 1 on a regression, a run that did not finish (no verdict) or a changed CPU
    behaviour (each named on stderr), else 0."""
    s = report["summary"]
    for x in s.get("incomplete", ()):
        print(f"INCOMPLETE {x}", file=sys.stderr)
    for line in behaviour_lines(report):
        print(line, file=sys.stderr)
    return 1 if s["regression"] or s.get("incomplete") or s.get("behaviour_changed") else 0


def write_outputs(report: dict, json_file=None, junit=None, markdown=None) -> None:
    if json_file:
        Path(json_file).write_text(json.dumps(report, indent=2) + "\n")
    if junit:
        Path(junit).write_text(render_junit(report))
    if markdown:
        Path(markdown).write_text(render_markdown(report))


def print_report(report: dict, fmt: str) -> None:
    """The report on stdout in ``fmt``; the one-line result and each regression on stderr."""
    if fmt == "auto":
        fmt = "table" if sys.stdout.isatty() else "json"
    if fmt == "json":
        print(json.dumps(report, indent=2))
    elif fmt == "markdown":
        print(render_markdown(report), end="")
    else:
        from rich.console import Console

        from patches.validate.report.table import render_table

        render_table(report, Console())
    s = report["summary"]
    print(
        f"validate: {s['regression']} regression(s), {s['gain']} gain(s), "
        f"{s['unchanged']} unchanged in {report['duration_s']}s",
        file=sys.stderr,
    )
    for c in report["comparisons"]:
        if c["change"] == "regression":
            print(
                f"REGRESSION {c['device']}: {c['test']} {c['before']} -> {c['after']}"
                + (f" (ran {', '.join(c['hunks_run'])})" if c.get("hunks_run") else ""),
                file=sys.stderr,
            )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["merge"]:
        return merge_main(argv[1:])
    a = build_parser(__doc__.split("\n\n")[0]).parse_args(argv)
    try:  # bad values are refused here, before any clone, device run or output
        opts = to_options(a)
    except UsageError as e:
        return fail(e)
    try:
        report = validate(opts)
    except (ValidateError, selection.SeriesError, shadow.ShadowError, OSError) as e:
        return fail(e)
    write_outputs(report, a.json, a.junit, a.markdown)
    print_report(report, a.format)
    return verdict(report)


if __name__ == "__main__":
    sys.exit(main())
