"""torch.compile (Inductor, C++ kernels) on trn tensors matches eager (kernels/trn/inductor.py)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="module")
def trn():
    import kernels.trn

    # registration alone: Inductor's trn backend installs itself on the first torch.compile
    return kernels.trn.register()


def test_compiled_mlp_forward_and_backward_match_eager(trn):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)).to(trn)
    x = torch.randn(4, 8, device=trn)
    torch._dynamo.reset()
    cm = torch.compile(m)
    y = cm(x)
    assert y.device.type == trn
    torch.testing.assert_close(y, m(x))
    cm(x).sum().backward()
    g = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    m(x).sum().backward()
    for a, p in zip(g, m.parameters()):
        torch.testing.assert_close(a, p.grad)


def _mlp(trn):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 2)).to(
        trn
    )


def test_dynamic_shapes_and_recompilation_on_a_new_shape(trn):
    from torch._dynamo.testing import CompileCounterWithBackend

    m = _mlp(trn)
    torch._dynamo.reset()
    # dynamic=True: one graph serves every batch size (crashed in Inductor's fusion before
    # inductor._answer_as_cpu); forward and backward
    counter = CompileCounterWithBackend("inductor")
    cm = torch.compile(m, backend=counter, dynamic=True)
    for n in (3, 5):
        x = torch.randn(n, 8, device=trn)
        y = cm(x)
        assert y.device.type == trn
        torch.testing.assert_close(y, m(x))
    cm(torch.randn(6, 8, device=trn)).sum().backward()
    assert counter.frame_count == 1
    # static shapes: a new shape recompiles (a second frame), no crash
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("inductor")
    cm = torch.compile(m, backend=counter, dynamic=False)
    for n in (4, 4, 7):
        x = torch.randn(n, 8, device=trn)
        torch.testing.assert_close(cm(x), m(x))
    assert counter.frame_count == 2


def test_tiny_transformer_forward_and_training_step_match_eager_and_cpu(trn):
    import copy

    from nanogpt_train import GPT  # tests/kernels is on sys.path (rootdir-less test dir)

    torch.manual_seed(0)
    ref = GPT()  # 2 blocks: causal SDPA, LayerNorm, GELU, tied embedding/head
    idx = torch.randint(0, 32, (2, 8))
    tgt = torch.randint(0, 32, (2, 8))

    def step(model, dev, compiled):
        model = copy.deepcopy(model).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        run = torch.compile(model) if compiled else model
        loss = run(idx.to(dev), tgt.to(dev))  # forward
        loss.backward()  # AOT-autograd backward when compiled
        grads = [p.grad.cpu() for p in model.parameters()]
        opt.step()
        return loss.detach().cpu(), grads, [p.detach().cpu() for p in model.parameters()]

    torch._dynamo.reset()
    compiled = step(ref, trn, True)
    for other in (step(ref, trn, False), step(ref, "cpu", False)):
        torch.testing.assert_close(compiled[0], other[0])
        for a, b in zip(compiled[1] + compiled[2], other[1] + other[2]):
            torch.testing.assert_close(a, b)


def test_nanogpt_style_script_with_compile_trains_on_trn():
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).with_name("nanogpt_train.py")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, HN_TRN="1", PYTHONPATH=str(root))
    r = subprocess.run(
        [sys.executable, str(script), "--device=trn", "--compile=True", "--max_iters=6"],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    losses = [float(v) for v in re.findall(r"iter \d+: loss ([0-9.]+)", r.stdout)]
    assert len(losses) == 6, r.stdout
    assert losses[-1] < losses[0] - 0.1, losses
    assert "device: trn" in r.stdout, r.stdout
    assert int(re.search(r"compiled frames: (\d+)", r.stdout).group(1)) >= 1, r.stdout


def test_an_op_inductor_cannot_compile_falls_back_to_eager(trn):
    from torch._inductor.utils import run_and_get_code

    # aten.histc has no Inductor lowering (make_fallback): the generated code calls the eager
    # kernel, on trn tensors, between C++ kernels
    def f(x):
        return torch.histc(x * 2, bins=4, min=-3, max=3) + 1

    x = torch.randn(4, 5, device=trn)
    torch._dynamo.reset()
    y, codes = run_and_get_code(torch.compile(f), x)
    assert y.device.type == trn
    torch.testing.assert_close(y, f(x))
    assert any("aten.histc" in c for c in codes), codes
    assert any("cpp_fused" in c for c in codes), codes  # the rest is C++ kernels


def test_compiled_attention_on_the_blocked_kernel_has_the_meta_strides(trn):
    import torch.nn.functional as F

    # a value head size unlike the query's sends trn's fused attention to its blocked kernel
    # (kernels/trn/attention.py); heads split by transpose, as in a GPT block: Inductor checks
    # the extern kernel's output and gradient strides against the meta kernel's
    def f(q, k, v):
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)

    torch.manual_seed(0)
    q, k = (torch.randn(2, 5, 2, 8, device=trn, requires_grad=True) for _ in range(2))
    v = torch.randn(2, 5, 2, 4, device=trn, requires_grad=True)
    torch._dynamo.reset()
    y = torch.compile(f)(q, k, v)
    y.pow(2).sum().backward()
    got = [y.detach()] + [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    y = f(q, k, v)
    y.pow(2).sum().backward()
    for a, b in zip(got, [y.detach()] + [t.grad for t in (q, k, v)]):
        torch.testing.assert_close(a, b)


def test_a_compile_backend_named_after_the_device(trn):
    """`torch.compile(backend="trn")`, as OpenReg registers a backend under its name: listed by
    Dynamo, runs Inductor's trn code generation, equals eager, recompiles for a new shape."""
    from torch._dynamo.backends.registry import list_backends
    from torch._dynamo.testing import CompileCounterWithBackend

    from kernels.trn import dynamo

    assert trn in list_backends(exclude_tags=())
    counter = CompileCounterWithBackend(trn)
    fn = torch.compile(lambda x: torch.relu(x + 1) * 2, backend=counter, fullgraph=True)
    for n in (4, 4, 7):
        x = torch.randn(n, device=trn)
        out = fn(x)
        assert out.device.type == trn
        torch.testing.assert_close(out.cpu(), torch.relu(x.cpu() + 1) * 2)
    assert dynamo.compile_path == "inductor"
    assert counter.frame_count == 2
