"""Audit benchmark on the installed torch tree (Python files), all numbers from one run.

    .venv/bin/python tests/benchmarks/bench_audit.py [--jobs N]

Prints: `grep -rn` time, a plain ast.parse-all time (same files, one process), our cold time
(no cache, a fresh cache dir), our warm time (cache filled), peak RSS of the scan processes, and
the ratios against those baselines. Each scan runs as its own `python -m audits.scan` process.
"""

from __future__ import annotations

import argparse
import ast
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from audits.languages import BY_NAME  # noqa: E402
from audits.scan import torch_source_root  # noqa: E402
from audits.vocabulary import SCAN_TOKENS  # noqa: E402
from audits.walk import walk  # noqa: E402

CPU: dict[str, float] = {}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], env=None, label: str = "") -> tuple[float, int, str]:
    """Wall seconds; CPU seconds of the command and its workers go to CPU[label]."""
    c0 = _children_cpu()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t
    CPU[label] = _children_cpu() - c0
    if p.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {p.stderr}")
    return dt, p.returncode, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=0)
    args = ap.parse_args()
    root = torch_source_root()
    entries, _ = walk(root, languages=[BY_NAME["python"]])
    print(f"tree: {root} ({len(entries)} Python files), cores: {os.cpu_count()}")

    t_grep, _, _ = timed(
        [
            "grep",
            "-rn",
            "--include=*.py",
            "--include=*.pyi",
            "-i",
            "-E",
            b"|".join(SCAN_TOKENS).decode(),
            root,
        ]
    )
    t, c = time.perf_counter(), time.process_time()
    for e in entries:
        with open(e.abspath, "rb") as f:
            try:
                ast.parse(f.read())
            except (SyntaxError, ValueError):
                pass
    t_ast, c_ast = time.perf_counter() - t, time.process_time() - c

    cache = tempfile.mkdtemp(prefix="hn-bench-")
    scan = [
        sys.executable,
        "-m",
        "audits.scan",
        root,
        "--language",
        "python",
        "-f",
        "json",
        "-o",
        os.devnull,
        "--cache-dir",
        cache,
        "--no-progress",
        "--jobs",
        str(args.jobs),
    ]
    t_cold, _, summary = timed(scan, label="cold")
    t_warm, _, _ = timed(scan, label="warm")
    t_nocache, _, _ = timed(scan + ["--no-cache"], label="nocache")
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    subprocess.run(["rm", "-rf", cache])

    print(f"scan summary: {summary}")
    print(f"{'grep -rn (text only)':28s} {t_grep:7.2f} s")
    print(f"{'ast.parse all files (1 proc)':28s} {t_ast:7.2f} s   ({c_ast:.2f} CPU s)")
    print(
        f"{'hwneutral cold':28s} {t_cold:7.2f} s   x{t_cold / t_grep:.2f} of grep, x{t_cold / t_ast:.2f} of ast.parse-all   (target <= 3 s)"
    )
    print(f"{'hwneutral --no-cache':28s} {t_nocache:7.2f} s")
    print(
        f"{'hwneutral warm (cached)':28s} {t_warm:7.2f} s   x{t_warm / t_grep:.2f} of grep, cold/warm x{t_cold / t_warm:.1f}   (target <= 0.5 s)"
    )
    print(
        f"CPU seconds (process + workers): cold {CPU['cold']:.2f}, warm {CPU['warm']:.2f}, "
        f"--no-cache {CPU['nocache']:.2f}; cold CPU / ast.parse-all CPU x{CPU['cold'] / c_ast:.2f}"
    )
    jobs = args.jobs or os.cpu_count() or 1
    print(
        f"idle-machine estimate (CPU / {min(jobs, os.cpu_count() or 1)} cores): cold "
        f"{CPU['cold'] / min(jobs, os.cpu_count() or 1):.2f} s, warm {CPU['warm']:.2f} s"
    )
    print(f"{'peak RSS (largest process)':28s} {rss_mb:7.0f} MB   (target <= 600 MB)")
    print(f"load average during run: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
