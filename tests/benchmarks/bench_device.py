"""Per-op overhead of the trn device against CPU, measured in one process.

    .venv/bin/python tests/benchmarks/bench_device.py [--repeat N] [--only NAME]

Prints, per op, the median time on CPU and on trn, the median of the trn/CPU ratios of
alternating CPU and trn blocks (the figure the targets apply to), the ratio of the fastest
blocks (least disturbed by other load) and the median ratio of process CPU time (all threads:
autograd's device thread included), which a loaded box disturbs least. Blocks are short (a few
ms) so that a scheduler time slice rarely splits one. Targets (issue 12): small elementwise ops
<= 1.3x CPU, MLP and tiny GPT-2 train steps <= 1.3x, matmul 512 <= 1.02x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

import kernels.trn  # noqa: F401  (registers trn)


def block_us(fn, inner: int) -> tuple[float, float]:
    """(wall us, process CPU us) per call over one block of ``inner`` calls."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner * 1e6, (time.process_time() - c0) / inner * 1e6


def paired(f_cpu, f_trn, repeat: int, inner: int) -> tuple[float, float, float, float, float]:
    """CPU and trn blocks alternate, so load changes hit both sides of each pair alike.

    Returns (median cpu us, median trn us, median of the per-pair ratios, ratio of the minima,
    median of the per-pair process-CPU-time ratios)."""
    for f in (f_cpu, f_trn):
        for _ in range(max(3, inner // 10)):
            f()
    cpu, trn, cpu_t, trn_t = [], [], [], []
    for _ in range(repeat):
        w, c = block_us(f_cpu, inner)
        cpu.append(w)
        cpu_t.append(c)
        w, c = block_us(f_trn, inner)
        trn.append(w)
        trn_t.append(c)
    ratios = [t / c for c, t in zip(cpu, trn)]
    cpu_ratios = [t / c for c, t in zip(cpu_t, trn_t) if c > 0]
    return (
        statistics.median(cpu),
        statistics.median(trn),
        statistics.median(ratios),
        min(trn) / min(cpu),
        statistics.median(cpu_ratios) if cpu_ratios else float("nan"),
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
        ("add 16x16", lambda: a + b, 1000),
        ("in-place add 16x16", lambda: a.add_(b), 1000),
        ("mul 16x16", lambda: a * b, 1000),
        ("relu 16x16", lambda: torch.relu(a), 1000),
        ("slice view", lambda: big[100:200, 3:500], 1000),
        ("matmul 512x512", lambda: m1 @ m2, 3),
        ("tiny MLP fwd+bwd+step", mlp_step, 20),
        # the same step with autograd's per-device worker thread (upstream's default, and trn's
        # before kernels/trn/register.py turned it off): the cost of the thread hand-off
        ("MLP step, device thread", lambda: _device_thread(mlp_step), 20),
        ("tiny GPT-2 train step", gpt2_step(device), 2),
    ]


def _device_thread(step) -> None:
    with torch.autograd.set_multithreading_enabled(True):
        step()


def gpt2_step(device: str):
    """One AdamW step of a 2-layer, 64-wide GPT-2 built from its config (random init, no hub)."""
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError:  # the test extra installs it; without it the row says so
        return None
    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=256,
        n_positions=64,
        n_embd=64,
        n_layer=2,
        n_head=4,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    model = GPT2LMHeadModel(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 256, (4, 32)).to(device)

    def step():
        opt.zero_grad(set_to_none=True)
        model(input_ids=ids, labels=ids).loss.backward()
        opt.step()

    return step


TARGET = {
    "slice view": 1.3,
    "matmul 512x512": 1.02,
    "tiny MLP fwd+bwd+step": 1.3,
    "MLP step, device thread": float("inf"),  # a comparison row, no target
    "tiny GPT-2 train step": 1.3,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument(
        "--threads", type=int, default=1, help="intra-op threads (1 = least noise on shared boxes)"
    )
    ap.add_argument("--only", action="append", default=[], help="run only these rows (repeatable)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cpu, trn = cases("cpu"), cases("trn")
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.repeat} cpu/trn "
        f"block pairs per op, load average {os.getloadavg()[0]:.1f}, autograd multithreading "
        f"{'on' if torch._C._is_multithreading_enabled() else 'off'}"
    )
    print(
        f"{'op':24} {'cpu us':>10} {'trn us':>10} {'ratio':>7} {'min/min':>7} {'cpu-time':>8}"
        f" {'target':>7}"
    )
    for (name, f_cpu, inner), (_, f_trn, _) in zip(cpu, trn):
        if args.only and name not in args.only:
            continue
        if f_cpu is None or f_trn is None:
            print(f"{name:24} not run (transformers is not installed)")
            continue
        t_cpu, t_trn, ratio, ratio_min, ratio_cpu = paired(f_cpu, f_trn, args.repeat, inner)
        target = TARGET.get(name, 1.3)
        flag = "ok" if ratio <= target else "MISS"
        print(
            f"{name:24} {t_cpu:10.2f} {t_trn:10.2f} {ratio:7.2f} {ratio_min:7.2f} {ratio_cpu:8.2f}"
            f" {target:6.2f}x {flag}"
        )


if __name__ == "__main__":
    main()
