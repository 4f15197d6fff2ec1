"""Per-op profile of one bench_device.py row on CPU and on trn (torch.profiler key averages).

    .venv/bin/python tests/benchmarks/profile_device.py "tiny GPT-2 train step" [--steps N]

Prints, per device, the profiled self time per step and the ops with the most self time (calls
per step, self and total microseconds per step): where trn spends what CPU does not. Profiler
overhead inflates small ops alike on both devices; compare rows, not totals with bench_device.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

import kernels.trn  # noqa: F401  (registers trn)

sys.path.insert(0, str(Path(__file__).parent))
import bench_device  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("row", help="a row name of bench_device.py")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(1)
    for dev in ("cpu", "trn"):
        fn = {name: f for name, f, _ in bench_device.cases(dev)}[args.row]
        for _ in range(3):
            fn()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(args.steps):
                fn()
        events = prof.key_averages()
        total = sum(e.self_cpu_time_total for e in events) / args.steps
        print(f"{dev}: {total:.0f} us self time per step")
        for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[: args.top]:
            print(
                f"  {e.key[:60]:60} calls {e.count // args.steps:5d} "
                f"self {e.self_cpu_time_total / args.steps:9.1f} "
                f"total {e.cpu_time_total / args.steps:9.1f}"
            )


if __name__ == "__main__":
    main()
