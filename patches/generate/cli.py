"""``python -m patches.generate PATH --out DIR``: scan, rewrite, and emit an upstreamable series.

Also ``--diff`` (print a unified diff; exit 1 when there would be changes) and ``--apply``
(write in place; refuses a dirty git tree unless ``--force``). The summary goes to stderr.
Exit codes: 0 done / nothing to fix, 1 ``--diff`` found changes, 2 bad input or refusal,
3 the plan does not account for every finding (``fixed + left != findings`` for a rule: a bug;
nothing is written).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from audits.catalog import CatalogError
from patches.common import gitutil
from patches.common.cli import ArgumentParser, UsageError, fail
from patches.generate import pipeline, recount
from patches.generate.args import check_args
from patches.generate.series import (
    DEFAULT_AUTHOR,
    check_author,
    resolve_date,
    unified_diff,
    write_series,
)
from patches.generate.state import Plan, Run, Settings
from patches.generate.targets import TARGETS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = ArgumentParser(prog="python -m patches.generate", description=__doc__.split("\n")[0])
    ap.add_argument(
        "path", type=Path, nargs="?", help="source tree to make hardware-neutral (the tree root)"
    )
    ap.add_argument(
        "--explain",
        metavar="FILE:LINE",
        help="print what generate (with the same --unsafe-fixes/--target/--select/--ignore) "
        "decides for the findings on one line, with the evidence, and exit",
    )
    mode = ap.add_argument_group("what to produce (at least one)")
    mode.add_argument("--out", type=Path, help="write NNNN-*.patch and a quilt `series` file here")
    mode.add_argument(
        "--diff", action="store_true", help="print a unified diff of the whole series"
    )
    mode.add_argument("--apply", action="store_true", help="rewrite the files in place")
    ap.add_argument("--force", action="store_true", help="with --apply: allow a dirty git tree")
    ap.add_argument("--unsafe-fixes", action="store_true", help="also apply `review` rules")
    ap.add_argument(
        "--target",
        choices=sorted(TARGETS),
        default="torch",
        help="torch: only PyTorch's own APIs (default); accelerator_api: our layer",
    )
    ap.add_argument("--max-files", type=int, default=10, help="files per patch (default 10)")
    ap.add_argument("--select", default="", help="comma-separated rule ids or prefixes to fix")
    ap.add_argument("--ignore", default="", help="comma-separated rule ids or prefixes to skip")
    ap.add_argument("--author", default=DEFAULT_AUTHOR, help="'Name <email>' for the patches")
    ap.add_argument(
        "--date",
        default=None,
        help="patch date (ISO 8601, RFC 2822 or epoch); default SOURCE_DATE_EPOCH "
        "or a fixed date, so reruns are byte-identical",
    )
    ap.add_argument("--devices", default="cpu,trn", help="devices named in the Test Plan")
    ap.add_argument(
        "--torch-floor",
        default="auto",
        help="the oldest torch the patches must run on: auto (what the tree's packaging "
        "declares, e.g. torch>=2.1 in pyproject.toml, else the release before the lowest its "
        "code tests torch's version for; default), none, or a release such as 2.1; a rewrite "
        "that calls a newer API is left",
    )
    ap.add_argument("--report", type=Path, help="reuse a `audits.scan --format json` report")
    args = ap.parse_args(argv)
    if args.explain:
        return args
    if args.path is None:
        ap.error("the following arguments are required: path")
    if not (args.out or args.diff or args.apply):
        ap.error("nothing to do: give --out DIR, --diff and/or --apply")
    if args.max_files < 1:
        ap.error("--max-files must be >= 1")
    try:
        args.author = check_author(args.author)
        resolve_date(args.date)
    except ValueError as e:
        ap.error(str(e))
    return args


def _split(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.explain:
        return _explain(args)
    try:  # every bad value is refused here: nothing is scanned or written before
        given_report = check_args(args)
        _refuse_dirty(args)
        run = pipeline.read(_settings(args))
        pipeline.scan(run, given_report)
    except (UsageError, CatalogError, ValueError) as e:  # ValueError: the audit's config error
        return fail(e)
    except _Dirty as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pipeline.plan(run)
    broken = run.plan.unaccounted(run.report.findings)
    if broken:  # a finding neither fixed nor left with a reason: a bug, so nothing is written
        print(
            "error: the series does not account for every finding (fixed + left != findings):",
            file=sys.stderr,
        )
        for line in broken:
            print(f"  {line}", file=sys.stderr)
        return 3
    rc = _write(run.plan, args)
    _summary(run, args)
    return rc


def _explain(args) -> int:
    from patches.generate import explain

    try:
        file, line = explain.parse_site(args.explain, args.path)
        options = (args.unsafe_fixes, _split(args.select), _split(args.ignore), args.torch_floor)
        sys.stdout.write(explain.explain(file, line, args.path, args.target, *options))
    except (UsageError, ValueError) as e:  # ValueError: FILE not under the tree given
        return fail(e)
    return 0


class _Dirty(Exception):
    pass


def _refuse_dirty(args) -> None:
    if args.apply and not args.force:
        dirty = gitutil.dirty_paths(args.path)
        if dirty:
            raise _Dirty(
                f"refusing --apply on a dirty git tree ({len(dirty)} changed or untracked "
                f"files, e.g. {dirty[0]}); commit them or pass --force"
            )


def _settings(args) -> Settings:
    return Settings(
        root=args.path,
        target=args.target,
        unsafe_fixes=args.unsafe_fixes,
        select=_split(args.select),
        ignore=_split(args.ignore),
        max_files=args.max_files,
        # The Test Plan names the paths as the user typed them: stable across reruns.
        tree=str(args.path),
        series=str(args.out or Path("DIR")),
        devices=args.devices,
        torch_floor=args.torch_floor,
    )


def _write(plan: Plan, args) -> int:
    """The series (``--out``), the diff (``--diff``: 1 when there are changes), ``--apply``."""
    rc = 0
    if args.out:
        write_series(plan.patches, args.out, args.author, args.date)
    if args.diff:
        diff = "".join(unified_diff(c) for c in plan.changes())
        sys.stdout.write(diff)
        rc = 1 if diff else 0
    if args.apply:
        _apply(args.path, plan)
    return rc


def _apply(root: Path, plan: Plan) -> None:
    for change in plan.changes():
        dst = root / change.path
        fd, tmp = tempfile.mkstemp(dir=dst.parent, prefix=".hn-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(change.after.encode("utf-8"))
        os.chmod(tmp, dst.stat().st_mode & 0o7777)
        os.replace(tmp, dst)


def _reason_kind(reason: str) -> str:
    from patches.generate.intent import KINDS

    kind = reason.split(":", 1)[0]
    return f"{kind}: {KINDS[kind]}" if kind in KINDS else reason


def _summary(run: Run, args) -> None:
    plan = run.plan
    seconds = time.perf_counter() - run.started
    # Per finding, as --explain decides it: rewritten, or gone from the series' result (a
    # rewrite removes findings it was not asked about: the branch a device-pick block was).
    counts = recount.counts(run)
    before, fixed, left, written = counts.before, counts.fixed, counts.left, counts.written
    # A site the intent gate left is counted by its first evidence kind (the details differ
    # per site: `--explain FILE:LINE` prints them); only the findings the counts call left (a
    # manual rule's finding that another rule's rewrite removed is fixed, not left).
    reasons = Counter(
        _reason_kind(x.reason)
        for x in plan.left
        if (x.finding.path, x.finding.rule, x.finding.line, x.finding.col) in counts.left_at
    )
    out = sys.stderr
    print(
        f"{len(plan.patches)} patches, {len(plan.changes())} files, {sum(fixed.values())} "
        f"findings fixed, {sum(left.values())} left, {len(plan.errors)} file errors "
        f"({seconds:.1f}s)",
        file=out,
    )
    for rule in sorted(set(before) | set(left)):
        print(
            f"  {rule:8} before {before[rule]:5}  fixed {fixed[rule]:5}  left {left[rule]:5}",
            file=out,
        )
    if written:
        print(
            f"  {sum(written.values())} more found on lines the series wrote ("
            + ", ".join(f"{r} {n}" for r, n in sorted(written.items()))
            + "), not counted left: a rewrite that keeps CUDA's call under CUDA's check on "
            "purpose writes the call and its guard there",
            file=out,
        )
    for reason, n in reasons.most_common(8):
        print(f"  left {n:5}: {reason}", file=out)
    for path, name, by in plan.kept_imports[:20]:
        print(f"  kept import {name} in {path}: {by} imports it from there", file=out)
    for e in plan.errors[:20]:
        print(f"  error {e.path}: {e.reason} {e.detail}".rstrip(), file=out)
    if args.out:
        print(
            f"wrote {args.out}/series; apply with: git am --keep-non-patch --keep-cr {args.out}/*.patch",
            file=out,
        )


if __name__ == "__main__":
    sys.exit(main())
