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
