"""Markdown table of every closed device list in a tree (default: the installed torch package).

    .venv/bin/python tests/audits_cpp/closed_lists_table.py [ROOT]

Runs the real scan (audits.engine.run_scan, fresh cache) with `--select closed-device-list` (the
category: the C++ rule and any other language's rule in the family) and prints one row per
finding: location, rule, what the list names and what it leaves out (the finding's message).
docs/audit.md holds its output for the installed torch.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

CATEGORY = "closed-device-list"


def table(findings) -> str:
    rows = ["| location | rule | list |", "|---|---|---|"]
    for f in sorted(findings, key=lambda f: (f.path, f.line, f.col)):
        msg = f.message.replace("|", "\\|")
        rows.append(f"| `{f.path}:{f.line}` | {f.rule} | {msg} |")
    return "\n".join(rows)


def main() -> int:
    from audits.engine import Options, run_scan

    default = Path(importlib.util.find_spec("torch").origin).parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", default=str(default))
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    if not Path(a.root).is_dir():
        ap.error(f"not a directory: {a.root}")
    with tempfile.TemporaryDirectory() as d:
        rep = run_scan(Options(root=a.root, jobs=a.jobs, cache_dir=d, select=[CATEGORY]))
    if rep.errors:
        print(f"{len(rep.errors)} files could not be scanned", file=sys.stderr)
    print(table(rep.findings))
    print(f"\n{len(rep.findings)} closed device lists in {rep.files_scanned} files scanned.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
