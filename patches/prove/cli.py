"""Prove series on PyTorch's own code with PyTorch's own tests: one PR bundle per subsystem.

    python -m patches.prove [--out DIR] [--subsystems a,b] [--test-root DIR] [--devices cpu,trn,cuda]

For each subsystem of ``subsystems.yaml``: scan its files of the installed torch, generate the
series for them only (safe + review fixes, as ``patches.generate --unsafe-fixes``; or take
``--series DIR`` for one subsystem), select the upstream test files that exercise it (import
analysis plus the committed map), validate before/after on every device through the shadow
package (``patches.validate --tree installed``) with per-hunk device coverage, and write
``DIR/SUBSYSTEM/{series/,validation.md,validation.json}`` plus ``DIR/SUMMARY.md``. Each commit's
``Test Plan:`` is commands run from a PyTorch checkout; the patches carry your git identity and
the date (``--reproducible``: fixed values).

Exit codes: 0 every bundle has no regression; 1 a regression (the patch and its failing tests are
named on stderr and in SUMMARY.md) or a device run that timed out or crashed (INCOMPLETE: no
verdict); 2 bad input (unknown subsystem, missing test root, no git identity, a series
that does not apply).

This module parses and prints; the engine is patches.prove.run.
"""

from __future__ import annotations

import sys
from pathlib import Path

from patches.common.cli import UsageError, fail
from patches.prove import args as pargs
from patches.prove.config import ProveError
from patches.prove.run import ProveOptions, prove_all
from patches.prove.testplan import signature
from patches.validate import selection, shadow
from patches.validate.args import parse_xdist
from patches.validate.options import ValidateError


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _options(a) -> ProveOptions:
    """Everything checked before any work: bad values, subsystems, test root, git identity."""
    devices = pargs.check_args(a)
    xdist = parse_xdist(a.xdist)
    return ProveOptions(
        subsystems=pargs.chosen_subsystems(a),
        out=Path(a.out),
        test_root=pargs.test_root(a),
        site=shadow.installed_site(),
        devices=devices,
        signature=signature(a.reproducible),
        series=Path(a.series) if a.series else None,
        xdist=xdist,
        coverage=not a.no_coverage,
        timeout=a.timeout,
        mutants=a.mutants,
        oracle=not a.no_oracle,
    )


def main(argv: list[str] | None = None) -> int:
    a = pargs.build_parser(__doc__.split("\n\n")[0]).parse_args(argv)
    try:
        opts = _options(a)
        rows = prove_all(opts, _log)
    except UsageError as e:
        return fail(e)
    except (ProveError, ValidateError, selection.SeriesError, shadow.ShadowError, OSError) as e:
        return fail(e)
    print((opts.out / "SUMMARY.md").read_text(), end="")
    regs = [r for r in rows if r.get("regressed")]
    for r in regs:
        for x in r["regressed"]:
            print(f"REGRESSION {r['subsystem']}: {x}", file=sys.stderr)
    partial = [r for r in rows if r.get("incomplete")]
    for r in partial:
        for x in r["incomplete"]:
            print(f"INCOMPLETE {r['subsystem']}: {x} (no verdict)", file=sys.stderr)
    changed = [r for r in rows if r.get("behaviour")]
    for r in changed:
        for x in r["behaviour"]:
            print(f"{x} ({r['subsystem']})", file=sys.stderr)
    return 1 if regs or partial or changed else 0


if __name__ == "__main__":
    sys.exit(main())
