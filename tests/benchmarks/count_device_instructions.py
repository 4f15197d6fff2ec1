"""Instructions per op on CPU and on trn, counted by valgrind's callgrind (load-independent).

    .venv/bin/python tests/benchmarks/count_device_instructions.py [--ops add,mul,relu,iadd] [-n 5000]

A box's load moves wall-time ratios by more than a per-op change is worth, and this VM exposes no
hardware counters, so this counts instructions instead: for each op and device a child Python runs
under `valgrind --tool=callgrind --instr-atstart=no`, warms up, and only then is collection switched
on (`callgrind_control -i on`) for N calls of the op on 16x16 float32. Prints instructions per call
on each device and their ratio (docs/performance.md, Device, third round). Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import sys, time, torch
import kernels.trn  # noqa: F401
torch.set_num_threads(1)
dev, op, n, ready = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
a, b = torch.randn(16, 16, device=dev), torch.randn(16, 16, device=dev)
f = {"add": lambda: a + b, "mul": lambda: a * b, "relu": lambda: torch.relu(a),
     "iadd": lambda: a.add_(b)}[op]
for _ in range(200):
    f()
open(ready, "w").close()
time.sleep(5)  # the parent switches collection on meanwhile (sleeping costs no instructions)
for _ in range(n):
    f()
import os
os._exit(0)
"""


def count(dev: str, op: str, n: int, tmp: Path) -> int:
    ready, out = tmp / f"ready-{dev}-{op}", tmp / f"cg-{dev}-{op}.out"
    proc = subprocess.Popen(
        [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-c",
            CHILD,
            dev,
            op,
            str(n),
            str(ready),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while not ready.exists():
        if proc.poll() is not None:
            raise SystemExit(
                f"{dev} {op}: the child exited with {proc.returncode} before warming up"
            )
        time.sleep(0.5)
    subprocess.run(
        ["callgrind_control", "-i", "on", str(proc.pid)], check=True, stdout=subprocess.DEVNULL
    )
    if proc.wait() != 0:
        raise SystemExit(f"{dev} {op}: the child exited with {proc.returncode}")
    text = subprocess.run(
        ["callgrind_annotate", str(out)], capture_output=True, text=True, check=True
    ).stdout
    m = re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text)
    if m is None:
        raise SystemExit(f"{dev} {op}: no PROGRAM TOTALS in callgrind_annotate's output")
    return int(m.group(1).replace(",", "")) // n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="add,mul,relu,iadd")
    ap.add_argument("-n", type=int, default=5000)
    args = ap.parse_args()
    for tool in ("valgrind", "callgrind_control", "callgrind_annotate"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found (apt install valgrind)")
    os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    print(f"{'op':8} {'cpu instr':>10} {'trn instr':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for op in args.ops.split(","):
            cpu, trn = (count(d, op, args.n, Path(tmp)) for d in ("cpu", "trn"))
            print(f"{op:8} {cpu:>10,} {trn:>10,} {trn / cpu:>6.2f}")


if __name__ == "__main__":
    main()
