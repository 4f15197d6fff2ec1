"""Per-op overhead of the trn device against CPU, measured in one process.

    .venv/bin/python tests/benchmarks/bench_device.py [--repeat N]

Prints, per op, the median time on CPU and on trn, the median of the trn/CPU ratios of
alternating CPU and trn blocks (the figure the targets apply to) and the ratio of the fastest
blocks (least disturbed by other load). Targets (issue 3): small ops
<= 1.5x CPU, matmul 512 <= 1.05x, tiny MLP fwd+bwd+step <= 1.5x.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import kernels.trn  # noqa: F401  (registers trn)


def block_us(fn, inner: int) -> float:
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner * 1e6


def paired(f_cpu, f_trn, repeat: int, inner: int) -> tuple[float, float, float, float]:
    """CPU and trn blocks alternate, so load changes hit both sides of each pair alike.

    Returns (median cpu us, median trn us, median of the per-pair ratios, ratio of the minima)."""
    for f in (f_cpu, f_trn):
        for _ in range(max(3, inner // 10)):
            f()
    cpu, trn = [], []
    for _ in range(repeat):
        cpu.append(block_us(f_cpu, inner))
        trn.append(block_us(f_trn, inner))
    ratios = [t / c for c, t in zip(cpu, trn)]
    return (
        statistics.median(cpu),
        statistics.median(trn),
        statistics.median(ratios),
        min(trn) / min(cpu),
    )


def cases(device: str):
    torch.manual_seed(0)
    a, b = torch.randn(16, 16, device=device), torch.randn(16, 16, device=device)
    big = torch.randn(1024, 1024, device=device)
    m1, m2 = torch.randn(512, 512, device=device), torch.randn(512, 512, device=device)
    mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(
        device
    )
    opt = torch.optim.SGD(mlp.parameters(), lr=0.01)
    x, y = torch.randn(16, 32, device=device), torch.randint(0, 10, (16,), device=device)

    def mlp_step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(mlp(x), y).backward()
        opt.step()

    return [
        ("add 16x16", lambda: a + b, 2000),
        ("in-place add 16x16", lambda: a.add_(b), 2000),
        ("slice view", lambda: big[100:200, 3:500], 2000),
        ("matmul 512x512", lambda: m1 @ m2, 5),
        ("tiny MLP fwd+bwd+step", mlp_step, 200),
    ]


TARGET = {"matmul 512x512": 1.05, "tiny MLP fwd+bwd+step": 1.5}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument(
        "--threads", type=int, default=1, help="intra-op threads (1 = least noise on shared boxes)"
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cpu, trn = cases("cpu"), cases("trn")
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.repeat} cpu/trn block pairs per op"
    )
    print(f"{'op':24} {'cpu us':>10} {'trn us':>10} {'ratio':>7} {'min/min':>7} {'target':>7}")
    for (name, f_cpu, inner), (_, f_trn, _) in zip(cpu, trn):
        t_cpu, t_trn, ratio, ratio_min = paired(f_cpu, f_trn, args.repeat, inner)
        target = TARGET.get(name, 1.5)
        flag = "ok" if ratio <= target else "MISS"
        print(
            f"{name:24} {t_cpu:10.2f} {t_trn:10.2f} {ratio:7.2f} {ratio_min:7.2f} {target:6.2f}x {flag}"
        )


if __name__ == "__main__":
    main()
