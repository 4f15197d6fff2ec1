"""Overhead of autoport on a small training step, measured in one run against the unported baseline.

    .venv/bin/python tests/benchmarks/bench_autoport.py [--steps 50] [--rounds 7]

baseline : the step written device-neutrally, autoport not installed
neutral  : the same code with autoport installed (the cost of the patches on code that needs none)
ported   : the CUDA-style step (x.to("cuda"), torch.cuda.amp.autocast, torch.cuda.amp.GradScaler,
           torch.cuda.synchronize) running on this machine's device through autoport
Rounds interleave the three so machine load hits them alike; medians of per-step time are reported.
Target: ported/baseline <= 1.05.
"""

import argparse
import statistics
import time

import torch
import torch.nn as nn

import accelerator_api as A
from accelerator_api._port import RECORDER, install, uninstall


def make(width):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
    return model, torch.randn(64, width), torch.randint(0, 10, (64,))


def neutral_step(model, opt, scaler, x, y):
    dev = A.device()
    xb, yb = x.to(dev), y.to(dev)
    opt.zero_grad(set_to_none=True)
    with A.autocast():
        loss = nn.functional.cross_entropy(model(xb), yb)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    A.synchronize()


def cuda_step(model, opt, scaler, x, y):
    xb, yb = x.to("cuda"), y.to("cuda", non_blocking=True)
    opt.zero_grad(set_to_none=True)
    with torch.cuda.amp.autocast():
        loss = nn.functional.cross_entropy(model(xb), yb)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    torch.cuda.synchronize()


def per_step(step, scaler_factory, width, steps):
    model, x, y = make(width)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = scaler_factory()
    for _ in range(5):
        step(model, opt, scaler, x, y)
    t0 = time.perf_counter()
    for _ in range(steps):
        step(model, opt, scaler, x, y)
    return (time.perf_counter() - t0) / steps


def measure(width, steps, rounds):
    times = {"baseline": [], "neutral": [], "ported": []}
    for _ in range(rounds):
        times["baseline"].append(per_step(neutral_step, A.GradScaler, width, steps))
        install(quiet=True)
        try:
            times["neutral"].append(per_step(neutral_step, A.GradScaler, width, steps))
            times["ported"].append(per_step(cuda_step, torch.cuda.amp.GradScaler, width, steps))
        finally:
            uninstall()
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="intra-op threads (1: on a shared 2-core box more threads only add spin-wait noise)",
    )
    ns = ap.parse_args()
    torch.set_num_threads(ns.threads)
    print(
        f"device: {A.device_type()}  torch {torch.__version__}  threads {torch.get_num_threads()}"
    )
    print(
        f"{'step':<22}{'baseline us':>12}{'neutral us':>12}{'ported us':>12}{'neutral/base':>14}{'ported/base':>13}"
    )
    worst = 0.0
    for label, width in (("small MLP (256 wide)", 256), ("tiny MLP (16 wide)", 16)):
        m = measure(width, ns.steps, ns.rounds)
        r_n, r_p = m["neutral"] / m["baseline"], m["ported"] / m["baseline"]
        worst = max(worst, r_p) if width == 256 else worst
        print(
            f"{label:<22}{m['baseline'] * 1e6:>12.0f}{m['neutral'] * 1e6:>12.0f}{m['ported'] * 1e6:>12.0f}"
            f"{r_n:>14.3f}{r_p:>13.3f}"
        )
    sites = len(RECORDER.sites)
    print(
        f"redirected call sites recorded: {sites}; small-step target ported/baseline <= 1.05: "
        f"{'met' if worst <= 1.05 else 'NOT met'} ({worst:.3f})"
    )


if __name__ == "__main__":
    main()
