"""torch.compile (Inductor) vs eager training-step time, on trn and on CPU, in one process.

    .venv/bin/python tests/benchmarks/bench_compile.py [--repeat N] [--inner N]

Models: the MLP and the 2-block GPT of tests/kernels (nanogpt_train.GPT: causal SDPA, LayerNorm,
GELU). A step is forward + backward + SGD. Each (model, device) compiles once (not timed; its
wall time is printed), then eager and compiled blocks of ``inner`` steps alternate ``repeat``
times, so load changes hit both alike. Prints median ms per step, the median of the per-pair
compiled/eager ratios, and the trn/CPU ratio of the compiled steps.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import torch

import kernels.trn  # noqa: F401  (registers trn)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernels"))
from nanogpt_train import GPT  # noqa: E402


def models():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
    x = torch.randn(32, 64)
    yield "mlp 64-256-64, batch 32", mlp, (x,), lambda out: out.pow(2).mean()
    gpt = GPT(vocab_size=64, block_size=32, n_layer=2, n_head=2, n_embd=32)
    idx = torch.randint(0, 64, (4, 32))
    yield "gpt 2x32 T=32, batch 4", gpt, (idx, torch.roll(idx, 1, 1)), lambda out: out


def stepper(model, args, loss_of, compiled):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    run = torch.compile(model) if compiled else model

    def step():
        loss_of(run(*args)).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def block_ms(fn, inner):
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--inner", type=int, default=10)
    a = ap.parse_args()
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"{'model':26} {'device':6} {'compile s':>9} {'eager ms':>9} {'compiled ms':>11} "
          f"{'compiled/eager':>14}")  # fmt: skip
    for name, model, args, loss_of in models():
        compiled_ms = {}
        for dev in ("cpu", "trn"):
            m = copy.deepcopy(model).to(dev)
            dargs = tuple(t.to(dev) for t in args)
            eager = stepper(m, dargs, loss_of, False)
            torch._dynamo.reset()
            comp = stepper(copy.deepcopy(m), dargs, loss_of, True)
            t0 = time.perf_counter()
            comp()  # compiles forward and backward
            compile_s = time.perf_counter() - t0
            for f in (eager, comp):
                block_ms(f, 3)  # warm-up
            e, c, r = [], [], []
            for _ in range(a.repeat):
                e.append(block_ms(eager, a.inner))
                c.append(block_ms(comp, a.inner))
                r.append(c[-1] / e[-1])
            compiled_ms[dev] = statistics.median(c)
            print(f"{name:26} {dev:6} {compile_s:9.1f} {statistics.median(e):9.3f} "
                  f"{compiled_ms[dev]:11.3f} {statistics.median(r):13.2f}x")  # fmt: skip
        print(f"{name:26} compiled trn/cpu: {compiled_ms['trn'] / compiled_ms['cpu']:.2f}x")


if __name__ == "__main__":
    main()
