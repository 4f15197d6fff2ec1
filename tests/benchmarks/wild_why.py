"""generate's decision for every finding of a tree, as JSON (the wild-scripts benchmark's input).

    cd PROJECT && python tests/benchmarks/wild_why.py TREE > decisions.json

Run by wild_scripts.py in the checkout whose codemod is measured (its working directory goes
first on ``sys.path``). One ``pipeline.read`` + ``scan`` of TREE with ``--unsafe-fixes``, then
``explain.decisions`` per file with findings (what ``--explain`` prints: the first line says
REWRITTEN, LEFT or left, and why; a use of a project wrapper, the tree-level pass's finding,
is decided too: ``tree_uses``). A finding of the whole-tree scan with no decision would be
listed under ``undecided`` (none since round 22). A file whose decision raises is reported with
its traceback
under ``crashes`` (a codemod fault to report), the others are still decided.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, os.getcwd())

from patches.generate import explain, pipeline  # noqa: E402
from patches.generate.state import Settings  # noqa: E402


def decide(root: Path, floor: str = "auto") -> dict:
    run = pipeline.scan(pipeline.read(Settings(root, unsafe_fixes=True, torch_floor=floor)))
    report = run.report
    out = {
        "files_scanned": report.files_scanned,
        "files_with_findings": report.files_with_findings,
        "scan_errors": [f"{e.path}: {e.reason}" for e in report.errors],
        "files": {},
        "crashes": [],
    }
    for rel in sorted({f.path for f in report.findings}):
        mine = [f for f in report.findings if f.path == rel]
        try:
            d = explain.decisions(root / rel, root, run=run)
            found = [
                {
                    "rule": f.rule,
                    "line": f.line,
                    "end_line": f.end_line,
                    "col": f.col,
                    "lines": d.lines(f),
                }
                for f in d.found
            ]
        except Exception:  # noqa: BLE001 (a codemod fault: reported, the run goes on)
            out["crashes"].append({"file": rel, "traceback": traceback.format_exc()})
            continue
        out["files"][rel] = {
            "error": d.error,
            "findings": found,
            "undecided": undecided(mine, d.found),
        }
    return out


def undecided(scanned: list, found: list) -> list[dict]:
    """The scan's findings of a file that its rescan (what ``decisions`` decides) lacks."""
    extra = Counter((f.rule, f.line, f.end_line, f.col) for f in scanned)
    extra.subtract((f.rule, f.line, f.end_line, f.col) for f in found)
    keys = ("rule", "line", "end_line", "col")
    return [dict(zip(keys, k)) for k, n in sorted(extra.items()) for _ in range(max(n, 0))]


if __name__ == "__main__":
    floor = sys.argv[2] if len(sys.argv) > 2 else "auto"  # generate's --torch-floor
    json.dump(decide(Path(sys.argv[1]).resolve(), floor), sys.stdout)
