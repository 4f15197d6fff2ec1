"""Matrix scale-out: one worker vs ``--workers 2`` on this box, and N shards merged == unsharded.

    python tests/benchmarks/bench_matrix_shards.py [--devices cpu] [--ops K] [--shards 4]

``--ops K`` takes every (702/K)-th op of the committed cost table (default: all, i.e. ``--full``),
so a quick run keeps the cost mix of the whole matrix. Prints wall time per configuration, the
1-vs-2-worker ratio, and whether the merged shards hold exactly the unsharded run's cells.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from patches.matrix.costs import load_costs  # noqa: E402


def run(args: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "patches.matrix", *args], cwd=ROOT, capture_output=True, text=True
    )
    if proc.returncode:
        sys.exit(f"patches.matrix {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def cells(out: Path) -> list[tuple]:
    data = json.loads((out / "matrix.json").read_text())
    return [(c["op"], c["dtype"], c["device"], c["status"], c["samples"]) for c in data["cells"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="cpu")
    ap.add_argument("--ops", type=int, default=0, help="a spread subset of K ops (default: all)")
    ap.add_argument("--shards", type=int, default=4)
    a = ap.parse_args()
    sel = ["--full"]
    if a.ops:
        ops = sorted(load_costs())
        step = max(1, len(ops) // a.ops)
        sel = ["--ops", ",".join(ops[::step][: a.ops]), "--dtypes", "float32,bfloat16"]
    base = ["--devices", a.devices, *sel]
    tmp = Path(tempfile.mkdtemp(prefix="hn-bench-shards-"))
    print(f"load before: {os.getloadavg()[0]:.1f}; ops: {'all' if not a.ops else a.ops}")
    t1 = run(base + ["--out", str(tmp / "w1")])
    t2 = run(base + ["--workers", "2", "--out", str(tmp / "w2")])
    print(f"1 worker  {t1:8.1f} s")
    print(f"2 workers {t2:8.1f} s   ratio {t1 / t2:.2f}x")
    ts = [
        run(base + ["--shard", f"{i}/{a.shards}", "--out", str(tmp / f"s{i}")])
        for i in range(1, a.shards + 1)
    ]
    run(["merge", *(str(tmp / f"s{i}") for i in range(1, a.shards + 1)), "--out", str(tmp / "m")])
    same = cells(tmp / "m") == cells(tmp / "w1") == cells(tmp / "w2")
    print(
        f"{a.shards} shards: "
        + ", ".join(f"{t:.1f}" for t in ts)
        + f" s (max/min {max(ts) / min(ts):.2f})"
    )
    print(f"merged == unsharded == 2 workers: {same} ({len(cells(tmp / 'w1'))} cells)")
    print(f"load after: {os.getloadavg()[0]:.1f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
