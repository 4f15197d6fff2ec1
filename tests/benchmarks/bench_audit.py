"""Audit benchmark on the installed torch tree (Python files), all ratios from one run.

    .venv/bin/python tests/benchmarks/bench_audit.py [--jobs N] [--rounds R]

Baselines: `grep -rn` for the CUDA tokens, and a plain ast.parse of the same files (one
process). Our scan runs as its own `python -m audits.scan` process, cold (a fresh cache dir) and
warm (cache filled). The baseline and the scans alternate in R blocks (ast.parse-all, cold,
warm), so that a change of load on a shared machine moves both sides of a ratio; each ratio is
printed per block and as the median of the blocks, for wall time and for CPU time (the process
and its workers). Targets: cold <= 0.4x and warm <= 0.05x of ast.parse-all.
"""

from __future__ import annotations

import argparse
import ast
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from audits.languages import BY_NAME  # noqa: E402
from audits.scan import torch_source_root  # noqa: E402
from audits.vocabulary import SCAN_TOKENS  # noqa: E402
from audits.walk import walk  # noqa: E402

COLD_TARGET, WARM_TARGET = 0.4, 0.05


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the command and its workers, the last line of its stderr)."""
    c0 = _children_cpu()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {p.stderr}")
    return dt, _children_cpu() - c0, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""


def parse_all(paths: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of reading and ast.parse-ing every file in this process."""
    t, c = time.perf_counter(), time.process_time()
    for path in paths:
        with open(path, "rb") as f:
            try:
                ast.parse(f.read())
            except (SyntaxError, ValueError):
                pass
    return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    root = torch_source_root()
    entries, _ = walk(root, languages=[BY_NAME["python"]])
    paths = [e.abspath for e in entries]
    print(f"tree: {root} ({len(entries)} Python files), cores: {os.cpu_count()}")
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    pattern = b"|".join(SCAN_TOKENS).decode()
    grep = ["grep", "-rn", "--include=*.py", "--include=*.pyi", "-i", "-E", pattern, root]
    t_grep = timed(grep)[0]
    scan = [sys.executable, "-m", "audits.scan", root, "--language", "python", "-f", "json"]
    scan += ["-o", os.devnull, "--no-progress", "--jobs", str(args.jobs)]
    rows, summary = [], ""
    for i in range(args.rounds):
        cache = tempfile.mkdtemp(prefix="hn-bench-")
        try:
            a_wall, a_cpu = parse_all(paths)
            c_wall, c_cpu, summary = timed(scan + ["--cache-dir", cache])
            w_wall, w_cpu, _ = timed(scan + ["--cache-dir", cache])
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        rows.append((a_wall, a_cpu, c_wall, c_cpu, w_wall, w_cpu))
        print(
            f"block {i + 1}: ast.parse-all {a_wall:6.2f} s ({a_cpu:5.2f} CPU s) | cold {c_wall:6.2f} s"
            f" ({c_cpu:5.2f} CPU s) x{c_wall / a_wall:.2f} wall x{c_cpu / a_cpu:.2f} CPU | warm"
            f" {w_wall:5.2f} s ({w_cpu:4.2f} CPU s) x{w_wall / a_wall:.3f} wall x{w_cpu / a_cpu:.3f} CPU"
        )
    med = lambda k: statistics.median(k(r) for r in rows)  # noqa: E731
    print(f"scan summary: {summary}")
    print(f"grep -rn (text only): {t_grep:.2f} s")
    print(
        f"median of {len(rows)} blocks: cold x{med(lambda r: r[2] / r[0]):.2f} wall, "
        f"x{med(lambda r: r[3] / r[1]):.2f} CPU of ast.parse-all (target <= {COLD_TARGET}); "
        f"warm x{med(lambda r: r[4] / r[0]):.3f} wall, x{med(lambda r: r[5] / r[1]):.3f} CPU "
        f"(target <= {WARM_TARGET})"
    )
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS (largest scan process): {rss_mb:.0f} MB")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
