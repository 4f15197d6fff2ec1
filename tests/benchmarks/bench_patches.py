"""Benchmark: the whole series on a COPY of the installed torch tree (never the installed one).

    .venv/bin/python tests/benchmarks/bench_patches.py [--subset torch/utils,torch/testing/_internal]
        [--unsafe-fixes] [--markdown]

Copies site-packages/torch/**.py into a temp git repo, runs ``patches.generate`` on it, applies
the series with ``git am``, checks every changed file compiles, rescans, and prints per-rule
finding counts before/after plus timings. The ratio line compares generate's time with the plain
scan of the same tree measured in the same run (the baseline).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import torch

from patches import audit_io, gitutil
from patches.generate import main as generate


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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--subset", default="", help="comma-separated path prefixes (default: all)")
    ap.add_argument("--unsafe-fixes", action="store_true")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args()
    subset = [s for s in args.subset.split(",") if s]
    rules = list(audit_io.load_rules().values())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        root = copy_torch(tmp, subset)
        t0 = time.perf_counter()
        before = audit_io.scan_tree(root, rules)
        t_scan = time.perf_counter() - t0
        flags = ["--unsafe-fixes"] if args.unsafe_fixes else []
        t0 = time.perf_counter()
        rc = generate([str(root), "--out", str(tmp / "series"), *flags])
        t_gen = time.perf_counter() - t0
        assert rc == 0, rc
        names = (tmp / "series" / "series").read_text().split()
        t0 = time.perf_counter()
        gitutil.am(root, [tmp / "series" / n for n in names])
        t_am = time.perf_counter() - t0
        changed = gitutil.git("diff", "--name-only", f"HEAD~{len(names)}", "HEAD", cwd=root).stdout.split() \
            if names else []
        for rel in changed:
            compile((root / rel).read_text(encoding="utf-8"), rel, "exec", dont_inherit=True)
        after = audit_io.scan_tree(root, rules)
        b, a = before.counts("rule"), after.counts("rule")
        mode = "safe + review (--unsafe-fixes)" if args.unsafe_fixes else "safe only (default)"
        print(f"torch {torch.__version__} copy, {'subset ' + args.subset if subset else 'whole tree'}, "
              f"{mode}: {before.files_scanned} files scanned, {len(names)} patches, "
              f"{len(changed)} files changed, all applied with git am and compiled")
        print(f"time: scan {t_scan:.1f}s (baseline), generate {t_gen:.1f}s "
              f"({t_gen / t_scan:.1f}x scan), git am {t_am:.1f}s")
        rows = [(r, b[r], a[r]) for r in sorted(set(b) | set(a)) if b[r] != a[r]]
        if args.markdown:
            print("\n| rule | before | after |\n|---|---|---|")
            for r, x, y in rows:
                print(f"| {r} | {x} | {y} |")
        else:
            for r, x, y in rows:
                print(f"  {r:6} before {x:5}  after {y:5}")
        print(f"total findings: before {sum(b.values())}, after {sum(a.values())}; "
              f"rules with unchanged counts omitted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
