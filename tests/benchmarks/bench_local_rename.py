"""Benchmark: the share of ``patches.generate --unsafe-fixes`` spent renaming locals with their
code (``patches/generate/local_rename.py``), in one process, on a COPY of the installed torch
tree (or ``--tree DIR``).

    .venv/bin/python tests/benchmarks/bench_local_rename.py [--tree DIR]

Prints generate's wall time, the time inside ``local_rename.rename`` (every changing step of every
file calls it once), its share, the slowest files and the locals renamed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from patches.generate import local_rename, pipeline, plan  # noqa: E402
from patches.generate.state import Settings  # noqa: E402
from tests.benchmarks.bench_patches import copy_torch  # noqa: E402


def measure(tree: Path) -> dict:
    spent: dict[str, float] = {}
    real = local_rename.rename

    def timed(original, text, path="module.py"):
        t0 = time.perf_counter()
        try:
            return real(original, text, path)
        finally:
            spent[path] = spent.get(path, 0.0) + time.perf_counter() - t0

    plan.local_rename.rename = timed
    try:
        t0 = time.perf_counter()
        run = pipeline.generate(Settings(tree, unsafe_fixes=True))
        total = time.perf_counter() - t0
    finally:
        plan.local_rename.rename = real
    renamed = [(p, r) for (p, _), rs in run.plan.renamed.items() for r in rs]
    return {"total": total, "spent": spent, "renamed": renamed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="a tree to run on (default: a copy of torch)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tree = args.tree or copy_torch(Path(tmp), [])
        r = measure(tree)
    inside = sum(r["spent"].values())
    print(
        f"generate {r['total']:.1f} s; local_rename {inside:.2f} s over "
        f"{len(r['spent'])} files ({100 * inside / r['total']:.1f} %)"
    )
    for path, s in sorted(r["spent"].items(), key=lambda x: -x[1])[:5]:
        print(f"  {s:6.2f} s  {path}")
    for path, x in r["renamed"]:
        print(f"  renamed {path}: {x.function}: {x.old} -> {x.new}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
