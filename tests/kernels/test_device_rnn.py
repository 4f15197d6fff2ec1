"""nn.LSTM/GRU/LSTMCell/GRUCell on trn match CPU (kernels/trn/rnn.py).

ATen routes PrivateUse1 RNNs to the CUDA-only `_thnn_fused_*_cell` ops; trn registers Python
kernels for them. Each test builds the CPU module from a seed, deep-copies it to trn, and compares
outputs, final states and the gradients of the input, the initial states and every parameter.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

DEV = "trn"
TOL = dict(rtol=1e-4, atol=1e-5)


def _pair(make, seed=0):
    torch.manual_seed(seed)
    cpu = make()
    return cpu, copy.deepcopy(cpu).to(DEV)


def _leaf(t, device):
    return t.detach().to(device).requires_grad_()


def _flat(out):
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for o in out for t in _flat(o)]


def _assert_close(a, b, **tol):
    assert b.device.type == DEV
    torch.testing.assert_close(b.cpu(), a, **tol)


def _run_both(cpu, dev, args, tol=TOL, weights=None):
    """Forward both modules on leaf copies of ``args``, backward a weighted sum of every output,
    compare outputs and the gradients of args and parameters."""
    ca = [None if a is None else _leaf(a, "cpu") for a in args]
    da = [None if a is None else _leaf(a, DEV) for a in args]

    def call(m, a):
        a = [x for x in a if x is not None]
        if len(a) == 3:  # LSTM with an (h0, c0) tuple
            return m(a[0], (a[1], a[2]))
        return m(*a)

    co, do = _flat(call(cpu, ca)), _flat(call(dev, da))
    assert len(co) == len(do)
    for c, d in zip(co, do):
        _assert_close(c, d, **tol)
    torch.manual_seed(1)
    ws = weights or [torch.randn(c.shape) for c in co]
    sum((c * w).sum() for c, w in zip(co, ws) if w is not None).backward()
    sum((d * w.to(DEV)).sum() for d, w in zip(do, ws) if w is not None).backward()
    for c, d in zip(ca, da):
        if c is not None:
            _assert_close(c.grad, d.grad, **tol)
    for (name, p), q in zip(cpu.named_parameters(), dev.parameters()):
        assert q.grad is not None, name
        _assert_close(p.grad, q.grad, **tol)
    return co, do


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_layers_match_cpu(kind, bias, batch_first):
    cls = getattr(nn, kind)
    cpu, dev = _pair(lambda: cls(5, 6, num_layers=2, bias=bias, batch_first=batch_first,
                                 bidirectional=True))  # fmt: skip
    x = torch.randn((3, 4, 5) if batch_first else (4, 3, 5))
    h0 = torch.randn(4, 3, 6)
    args = [x, h0, torch.randn(4, 3, 6)] if kind == "LSTM" else [x, h0]
    _run_both(cpu, dev, args)
    _run_both(cpu, dev, [x])  # zero initial states


def test_lstm_with_projection_matches_cpu():
    cpu, dev = _pair(lambda: nn.LSTM(5, 6, num_layers=2, bidirectional=True, proj_size=3))
    args = [torch.randn(4, 2, 5), torch.randn(4, 2, 3), torch.randn(4, 2, 6)]
    _run_both(cpu, dev, args)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell"])
def test_cells_match_cpu(kind, bias):
    cpu, dev = _pair(lambda: getattr(nn, kind)(5, 7, bias=bias))
    x, h = torch.randn(3, 5), torch.randn(3, 7)
    args = [x, h, torch.randn(3, 7)] if kind == "LSTMCell" else [x, h]
    _run_both(cpu, dev, args)
    _run_both(cpu, dev, [x])


@pytest.mark.parametrize("used", ["hy", "cy"])
def test_lstm_cell_backward_with_one_undefined_grad(used):
    cpu, dev = _pair(lambda: nn.LSTMCell(5, 7))
    args = [torch.randn(3, 5), torch.randn(3, 7), torch.randn(3, 7)]
    w = torch.randn(3, 7)
    _run_both(cpu, dev, args, weights=[w, None] if used == "hy" else [None, w])


def test_backward_impl_undefined_grads_and_no_bias():
    ig, hg = torch.randn(2, 12, device=DEV), torch.randn(2, 12, device=DEV)
    cx = torch.randn(2, 3, device=DEV)
    hy, cy, ws = torch.ops.aten._thnn_fused_lstm_cell(ig, hg, cx)
    assert ws.shape == (2, 12) and hy.device.type == DEV
    impl = torch.ops.aten._thnn_fused_lstm_cell_backward_impl
    assert impl(None, None, cx, cy, ws, True) == (None, None, None)
    gg, gcx, gb = impl(hy, None, cx, cy, ws, False)
    assert gg.shape == (2, 12) and gcx.shape == (2, 3) and gb is None
    hy, ws = torch.ops.aten._thnn_fused_gru_cell(ig[:, :9], hg[:, :9], cx)
    grads = torch.ops.aten._thnn_fused_gru_cell_backward(hy, ws, False)
    assert [g is None for g in grads] == [False, False, False, True, True]


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_bfloat16_matches_cpu_float32(kind):
    torch.manual_seed(0)
    dev = getattr(nn, kind)(5, 6, num_layers=2, bidirectional=True).to(DEV, torch.bfloat16)
    cpu = copy.deepcopy(dev).to("cpu", torch.float32)  # the same (bf16-rounded) weights
    x = torch.randn(4, 3, 5).bfloat16()
    xc, xd = _leaf(x.float(), "cpu"), _leaf(x, DEV)
    oc, od = cpu(xc)[0], dev(xd)[0]
    assert od.dtype == torch.bfloat16
    tol = dict(rtol=5e-2, atol=5e-2)
    _assert_close(oc, od.float(), **tol)
    oc.sum().backward()
    od.float().sum().backward()
    _assert_close(xc.grad, xd.grad.float(), **tol)
    for p, q in zip(cpu.parameters(), dev.parameters()):
        assert q.grad.dtype == torch.bfloat16
        _assert_close(p.grad, q.grad.float(), rtol=5e-2, atol=1e-1)


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, num_layers=2, batch_first=True)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.lstm(x)[0][:, -1])


def test_three_sgd_steps_match_cpu():
    cpu, dev = _pair(Seq)
    torch.manual_seed(2)
    x, y = torch.randn(3, 5, 4), torch.randn(3, 2)
    for m, d in ((cpu, "cpu"), (dev, DEV)):
        opt = torch.optim.SGD(m.parameters(), lr=0.5)
        for _ in range(3):
            opt.zero_grad()
            nn.functional.mse_loss(m(x.to(d)), y.to(d)).backward()
            opt.step()
    for (name, p), q in zip(cpu.named_parameters(), dev.parameters()):
        _assert_close(p.detach(), q.detach(), **TOL)


def test_fused_cells_run_on_trn():
    lstm = nn.LSTM(3, 4).to(DEV)
    gru = nn.GRU(3, 4).to(DEV)
    x = torch.randn(2, 1, 3, device=DEV, requires_grad=True)
    with torch.profiler.profile() as prof:
        out = lstm(x)[0].sum() + gru(x)[0].sum()
        out.backward()
    names = {e.name for e in prof.events()}
    for op in ("_thnn_fused_lstm_cell", "_thnn_fused_lstm_cell_backward_impl",
               "_thnn_fused_gru_cell", "_thnn_fused_gru_cell_backward"):  # fmt: skip
        assert f"aten::{op}" in names, op
    assert out.device.type == DEV and x.grad.device.type == DEV


def _double_backward(module, x):
    """Gradient of ||d loss/dx||^2 with respect to x and every parameter (create_graph=True)."""
    out = module(x)
    y = _flat(out)[0]
    (g,) = torch.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    return [g, *torch.autograd.grad(g.pow(2).sum(), [x, *module.parameters()], allow_unused=True)]


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "LSTM", "GRU"])
def test_double_backward_through_the_fused_cells_matches_cpu(kind):
    """With create_graph autograd takes the differentiable cell backward (composite ops, each on
    the fused cells' trn outputs), so second derivatives exist and equal CPU's."""
    cpu, dev = _pair(lambda: getattr(nn, kind)(4, 5))
    x = torch.randn(3, 2, 4) if kind in ("LSTM", "GRU") else torch.randn(3, 4)
    expected = _double_backward(cpu, _leaf(x, "cpu"))
    got = _double_backward(dev, _leaf(x, DEV))
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert (e is None) == (g is None)
        if e is not None:
            _assert_close(e, g, **TOL)
