"""Benchmark: the whole series on a COPY of the installed torch tree (never the installed one).

    .venv/bin/python tests/benchmarks/bench_patches.py [--subset torch/utils,torch/cuda]
        [--mode safe|unsafe|both] [--markdown]

For each mode (default both: safe-only, then ``--unsafe-fixes``) on a fresh copy: copies
site-packages/torch/**.py into a temp git repo, scans it (baseline, cold, no cache), runs
``patches.generate`` on it (cold cache), applies the series with ``git am``, checks every changed
file ``compile()``s, rescans, and prints per-rule finding counts before/after plus timings; the
ratio compares generate's time with the plain scan of the same tree in the same run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch

from patches.common import gitutil
from patches.generate import audit_io
from patches.generate.cli import main as generate


def copy_torch(dst: Path, subset: list[str]) -> Path:
    src = Path(torch.__file__).parent
    root = dst / "tree"
    for p in src.rglob("*.py"):
        rel = Path("torch") / p.relative_to(src)
        if subset and not any(rel.as_posix().startswith(s) for s in subset):
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, root / rel)
    gitutil.git("init", "-q", cwd=root)
    gitutil.git("add", "-A", ".", cwd=root)
    gitutil.git("commit", "-q", "-m", "base", cwd=root)
    return root


def run(subset: list[str], unsafe: bool, markdown: bool) -> dict:
    rules = list(audit_io.load_rules().values())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")  # cold, private scan cache
        root = copy_torch(tmp, subset)
        t0 = time.perf_counter()
        before = audit_io.scan_tree(root, rules, use_cache=False)
        t_scan = time.perf_counter() - t0
        flags = ["--unsafe-fixes"] if unsafe else []
        t0 = time.perf_counter()
        rc = generate([str(root), "--out", str(tmp / "series"), *flags])
        t_gen = time.perf_counter() - t0
        assert rc == 0, rc
        names = (tmp / "series" / "series").read_text().split()
        t0 = time.perf_counter()
        gitutil.am(root, [tmp / "series" / n for n in names])
        t_am = time.perf_counter() - t0
        changed = (
            gitutil.git(
                "diff", "--name-only", f"HEAD~{len(names)}", "HEAD", cwd=root
            ).stdout.split()
            if names
            else []
        )
        for rel in changed:  # raises on the first file that does not compile
            compile((root / rel).read_text(encoding="utf-8"), rel, "exec", dont_inherit=True)
        after = audit_io.scan_tree(root, rules, use_cache=False)
    b, a = before.counts("rule"), after.counts("rule")
    mode = "safe + review (--unsafe-fixes)" if unsafe else "safe only (default)"
    print(
        f"torch {torch.__version__} copy, {'subset ' + ','.join(subset) if subset else 'whole tree'}, "
        f"{mode}: {before.files_scanned} files scanned, {len(names)} patches, "
        f"{len(changed)} files changed, all applied with git am and compiled"
    )
    print(
        f"time: scan {t_scan:.1f}s (baseline, cold), generate {t_gen:.1f}s "
        f"({t_gen / t_scan:.1f}x scan), git am {t_am:.1f}s"
    )
    rows = [(r, b[r], a[r]) for r in sorted(set(b) | set(a)) if b[r] != a[r]]
    if markdown:
        print("\n| rule | before | after |\n|---|---|---|")
        for r, x, y in rows:
            print(f"| {r} | {x} | {y} |")
    else:
        for r, x, y in rows:
            print(f"  {r:6} before {x:5}  after {y:5}")
    print(
        f"total findings: before {sum(b.values())}, after {sum(a.values())}; "
        f"rules with unchanged counts omitted\n"
    )
    return {"patches": len(names), "changed": len(changed)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--subset", default="", help="comma-separated path prefixes (default: all)")
    ap.add_argument("--mode", choices=("safe", "unsafe", "both"), default="both")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args()
    subset = [s for s in args.subset.split(",") if s]
    for unsafe in {"safe": [False], "unsafe": [True], "both": [False, True]}[args.mode]:
        run(subset, unsafe, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
