"""Which rewrites of a series do upstream test files run? (choosing `make prove`'s subsystems)

    .venv/bin/python tests/benchmarks/prove_reach.py SERIES TEST_FILE [-k EXPR] [--data FILE]

Runs TEST_FILE with pytest on CPU (``PYTORCH_TESTING_DEVICE_ONLY_FOR=cpu``) against the
*installed, unpatched* torch under coverage.py, measuring only the files the series changes, then
intersects the lines that ran with each hunk's removed lines (old numbering: the line a rewrite
replaces runs exactly when the rewrite would). Prints how many of the series' files the run
imported and which hunks it reached. ``--data FILE`` reads an existing coverage data file instead
of running. The patched-side, per-device answer is ``patches.validate``'s hunk coverage; this is
the cheap pre-selection over a whole-torch series (docs/validation.md, "Choosing the subsystems").
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import coverage
import torch

SITE = Path(torch.__file__).resolve().parents[1]
HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+\d+")


def series_hunks(series: Path) -> list[dict]:
    """Every hunk of every patch: its file and the old line numbers it removes."""
    out = []
    for patch in sorted(series.glob("*.patch")):
        path, hunk, old = None, None, 0
        for ln in patch.read_text(errors="replace").splitlines():
            if ln.startswith("diff --git "):
                path, hunk = ln.split(" b/", 1)[-1], None
            elif (m := HUNK.match(ln)) and path:
                old = int(m.group(1))
                hunk = {"patch": patch.name, "path": path, "removed": []}
                out.append(hunk)
            elif hunk is None or ln == "-- " or ln.startswith(("--- ", "+++ ")):
                continue
            elif ln.startswith("-"):
                hunk["removed"].append(old)
                old += 1
            elif ln.startswith(" ") or ln == "":
                old += 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("series", type=Path)
    ap.add_argument("test_file", type=Path)
    ap.add_argument("-k", default="")
    ap.add_argument("--data", type=Path, help="an existing coverage data file: do not run")
    a = ap.parse_args(argv)
    hunks = series_hunks(a.series)
    files = sorted({h["path"] for h in hunks})
    data_file = a.data
    if data_file is None:
        data_file = Path(tempfile.mkdtemp(prefix="prove-reach-")) / ".coverage"
        env = {
            **os.environ,
            "PYTORCH_TESTING_DEVICE_ONLY_FOR": "cpu",
            "CUDA_VISIBLE_DEVICES": "",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        cmd = [
            sys.executable,
            "-m",
            "coverage",
            "run",
            f"--data-file={data_file}",
            "--include=" + ",".join(str(SITE / f) for f in files),
            "-m",
            "pytest",
            "-q",
            "--tb=no",
            "-p",
            "no:cacheprovider",
            str(a.test_file.resolve()),
            *(["-k", a.k] if a.k else []),
        ]
        proc = subprocess.run(cmd, env=env, cwd=data_file.parent, capture_output=True, text=True)
        last = (proc.stdout.strip().splitlines() or [""])[-1]
        print(f"pytest rc {proc.returncode}: {last}")
    data = coverage.CoverageData(str(data_file))
    data.read()
    ran = {f: set(data.lines(str(SITE / f)) or ()) for f in files}
    imported = [f for f in files if ran[f]]
    reached = [h for h in hunks if set(h["removed"]) & ran[h["path"]]]
    print(
        f"{a.test_file.name}{' -k ' + repr(a.k) if a.k else ''}: imported {len(imported)}/"
        f"{len(files)} of the series' files; reached {len(reached)}/{len(hunks)} hunks"
    )
    for h in reached:
        lines = sorted(set(h["removed"]) & ran[h["path"]])
        print(f"  {h['patch']} {h['path']}:{','.join(map(str, lines))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
