"""Fused LSTM/GRU cells for trn: the `_thnn_fused_*_cell` ops ATen's RNN code calls on PrivateUse1.

ATen's RNN.cpp sends CUDA, XPU and PrivateUse1 inputs of `nn.LSTM`, `nn.GRU`, `nn.LSTMCell` and
`nn.GRUCell` to the fused cell ops, which have only CUDA kernels, so the fallback had no CPU kernel
to run and trn raised NotImplementedError. These Python kernels, registered for the PrivateUse1 key
(below autograd, whose formula calls the backward), emulate Trainium's fused cell the way the CUDA
kernel (aten/src/ATen/native/cuda/RNN.cu) computes it, with ordinary aten ops on the trn tensors:

- LSTM gates in order i, f, g, o: ``gates = input_gates + hidden_gates + input_bias + hidden_bias``
  (summed in that order), ``cy = f * cx + i * g``, ``hy = o * tanh(cy)``.
- GRU gates in order r, z, n: ``r``/``z`` as above, ``n = tanh(ig_n + ib_n + r * (hg_n + hb_n))``,
  ``hy = n + z * (hx - n)``.

Half-precision inputs are computed in float32 and rounded on store, as CUDA's accscalar_t does.

Workspaces (private between forward and backward here, but laid out as CUDA's, in the input dtype,
contiguous):

- LSTM ``[B, 4H]``: the activated gates ``i, f, g, o``; the backward also takes ``cx`` and ``cy``.
- GRU ``[B, 5H]``: ``r, z, n, hx, hg_n + hb_n``.

The backwards return undefined (None) bias gradients when ``has_bias`` is False, and
``_thnn_fused_lstm_cell_backward_impl`` returns all three undefined when neither ``grad_hy`` nor
``grad_cy`` is defined, as CUDA does; one undefined gradient counts as zero.
"""

from __future__ import annotations

import torch

from . import _core

_HALF = (torch.bfloat16, torch.float16)


def _acc(t: torch.Tensor) -> torch.Tensor:
    """``t`` in its accumulation dtype (float32 for half types, as CUDA's accscalar_t)."""
    return t.float() if t.dtype in _HALF else t


def _gates(input_gates, hidden_gates, input_bias, hidden_bias):
    g = _acc(input_gates) + _acc(hidden_gates)
    if input_bias is not None:
        g = g + _acc(input_bias) + _acc(hidden_bias)
    return g


def lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    dt = input_gates.dtype
    i, f, g, o = _gates(input_gates, hidden_gates, input_bias, hidden_bias).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * _acc(cx) + i * g
    hy = o * cy.tanh()
    workspace = torch.cat([i, f, g, o], 1).to(dt).contiguous()
    return hy.to(dt).contiguous(), cy.to(dt).contiguous(), workspace


def lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    if grad_hy is None and grad_cy is None:
        return None, None, None
    dt = workspace.dtype
    i, f, g, o = _acc(workspace).chunk(4, 1)
    tcy = _acc(cy).tanh()
    if grad_hy is not None:
        go = _acc(grad_hy)
        gog = go * tcy
        gcx = go * o * (1 - tcy * tcy)
        if grad_cy is not None:
            gcx = gcx + _acc(grad_cy)
    else:
        gog = torch.zeros_like(tcy)
        gcx = _acc(grad_cy)
    gig = gcx * g * (1 - i) * i
    gfg = gcx * _acc(cx) * (1 - f) * f
    gcg = gcx * i * (1 - g * g)
    gog = gog * (1 - o) * o
    grad_gates = torch.cat([gig, gfg, gcg, gog], 1).to(dt).contiguous()
    grad_cx = (gcx * f).to(dt).contiguous()
    grad_bias = grad_gates.sum(0) if has_bias else None
    return grad_gates, grad_cx, grad_bias


def gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    dt = input_gates.dtype
    ir, iz, in_ = _acc(input_gates).chunk(3, 1)
    hr, hz, hn = _acc(hidden_gates).chunk(3, 1)
    if input_bias is not None:
        b1r, b1z, b1n = _acc(input_bias).chunk(3)
        b2r, b2z, b2n = _acc(hidden_bias).chunk(3)
        r = (ir + hr + b1r + b2r).sigmoid()
        z = (iz + hz + b1z + b2z).sigmoid()
        hn = hn + b2n
        n = (in_ + b1n + r * hn).tanh()
    else:
        r = (ir + hr).sigmoid()
        z = (iz + hz).sigmoid()
        n = (in_ + r * hn).tanh()
    hy = n + z * (_acc(hx) - n)
    workspace = torch.cat([r.to(dt), z.to(dt), n.to(dt), hx, hn.to(dt)], 1).contiguous()
    return hy.to(dt).contiguous(), workspace


def gru_cell_backward(grad_hy, workspace, has_bias):
    dt = workspace.dtype
    r, z, n, hx, hn = _acc(workspace).chunk(5, 1)
    go = _acc(grad_hy)
    gz = go * (hx - n) * (1 - z) * z
    ghx = go * z
    gn = go * (1 - z) * (1 - n * n)
    ghn = gn * r
    gr = gn * hn * (1 - r) * r
    grad_input_gates = torch.cat([gr, gz, gn], 1).to(dt).contiguous()
    grad_hidden_gates = torch.cat([gr, gz, ghn], 1).to(dt).contiguous()
    grad_hx = ghx.to(dt).contiguous()
    if has_bias:
        return (
            grad_input_gates,
            grad_hidden_gates,
            grad_hx,
            grad_input_gates.sum(0),
            grad_hidden_gates.sum(0),
        )
    return grad_input_gates, grad_hidden_gates, grad_hx, None, None


def install() -> None:
    """Register the four fused-cell kernels for PrivateUse1; idempotent."""
    _core.python_kernels(
        __name__,
        {
            "_thnn_fused_lstm_cell": lstm_cell,
            "_thnn_fused_lstm_cell_backward_impl": lstm_cell_backward_impl,
            "_thnn_fused_gru_cell": gru_cell,
            "_thnn_fused_gru_cell_backward": gru_cell_backward,
        },
    )
