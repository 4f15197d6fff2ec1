"""Fused attention for trn (SDPBackend.OVERRIDEABLE): flash-style blocked kernels.

kernels/csrc/attention.cpp makes scaled_dot_product_attention choose OVERRIDEABLE on trn; these
are the kernels it then calls. Like a flash kernel they never hold the L x S attention matrix:
keys/values are visited in blocks of BLOCK with an online softmax (running max and sum, fp32
accumulation), the forward returns the log-sum-exp, and the backward recomputes each block's
probabilities from it. Registered for the PrivateUse1 key, they run below autograd; the ops they
call run on trn like any other (the CPU kernels through the fallback).
"""

from __future__ import annotations

import math

import torch

BLOCK = 128
_lib: torch.library.Library | None = None


def _bias(attn_bias, dtype):
    if attn_bias is None or not attn_bias.numel():
        return None
    if attn_bias.dtype == torch.bool:
        zero = torch.zeros((), dtype=dtype, device=attn_bias.device)
        return torch.where(attn_bias, zero, zero - float("inf"))
    return attn_bias.to(dtype)


def _scores(qs, k, bias, is_causal, s0, s1):
    """Scaled scores of the query rows against keys s0:s1, bias and causal mask applied."""
    sc = qs @ k[..., s0:s1, :].float().transpose(-2, -1)
    if bias is not None:
        sc = sc + bias[..., s0:s1]
    if is_causal:  # top-left aligned, as the math path: key j is visible to query i iff j <= i
        rows = torch.arange(qs.size(-2), device=qs.device).unsqueeze(-1)
        cols = torch.arange(s0, s1, device=qs.device).unsqueeze(0)
        sc = sc.masked_fill(cols > rows, float("-inf"))
    return sc


def forward(query, key, value, attn_bias=None, dropout_p=0.0, is_causal=False,
            return_debug_mask=False, *, scale=None):  # fmt: skip
    if dropout_p != 0.0:
        raise RuntimeError("trn fused attention: dropout is not supported (use the math path)")
    b, h, n_q, e = query.shape
    n_k = key.size(-2)
    scale = 1.0 / math.sqrt(e) if scale is None else scale
    qs = query.float() * scale
    bias = _bias(attn_bias, torch.float32)
    m = torch.full((b, h, n_q, 1), float("-inf"), device=query.device)
    denom = torch.zeros((b, h, n_q, 1), device=query.device)
    acc = torch.zeros((b, h, n_q, value.size(-1)), device=query.device)
    for s0 in range(0, n_k, BLOCK):
        s1 = min(s0 + BLOCK, n_k)
        sc = _scores(qs, key, bias, is_causal, s0, s1)
        m_new = torch.maximum(m, sc.amax(-1, keepdim=True))
        p = torch.exp(sc - m_new)
        corr = torch.exp(m - m_new)
        denom = denom * corr + p.sum(-1, keepdim=True)
        acc = acc * corr + p @ value[..., s0:s1, :].float()
        m = m_new
    out = (acc / denom).to(query.dtype)
    lse = (m + torch.log(denom)).squeeze(-1)
    empty = torch.empty(0, dtype=torch.int64, device=query.device)
    return out, lse, empty, empty, n_q, n_k, empty, empty, torch.empty(0, device=query.device)


def backward(grad_out, query, key, value, attn_bias, grad_input_mask, out, logsumexp,
             cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, philox_seed,
             philox_offset, *, scale=None):  # fmt: skip
    e = query.size(-1)
    n_k = key.size(-2)
    scale = 1.0 / math.sqrt(e) if scale is None else scale
    q = query.float()
    qs = q * scale
    do = grad_out.float()
    bias = _bias(attn_bias, torch.float32)
    delta = (do * out.float()).sum(-1, keepdim=True)
    lse = logsumexp.unsqueeze(-1)
    dq = torch.zeros_like(q)
    dk = torch.zeros(key.shape, device=key.device)
    dv = torch.zeros(value.shape, device=value.device)
    dbias = None
    want_bias = grad_input_mask[3] and bias is not None and attn_bias.dtype != torch.bool
    if want_bias:
        dbias = torch.zeros(torch.broadcast_shapes(bias.shape, (*q.shape[:-1], n_k)),
                            device=q.device)  # fmt: skip
    for s0 in range(0, n_k, BLOCK):
        s1 = min(s0 + BLOCK, n_k)
        p = torch.exp(_scores(qs, key, bias, is_causal, s0, s1) - lse)
        kb, vb = key[..., s0:s1, :].float(), value[..., s0:s1, :].float()
        dv[..., s0:s1, :] = p.transpose(-2, -1) @ do
        ds = p * (do @ vb.transpose(-2, -1) - delta)
        dq += (ds @ kb) * scale
        dk[..., s0:s1, :] = (ds.transpose(-2, -1) @ q) * scale
        if want_bias:
            dbias[..., s0:s1] = ds
    grads = [dq.to(query.dtype), dk.to(key.dtype), dv.to(value.dtype), None]
    if want_bias:  # reduce over the dimensions the bias was broadcast along
        red = dbias
        lead = red.dim() - attn_bias.dim()
        if lead:
            red = red.sum(dim=tuple(range(lead)))
        keep = [i for i, n in enumerate(attn_bias.shape) if n == 1 and red.size(i) != 1]
        if keep:
            red = red.sum(dim=keep, keepdim=True)
        grads[3] = red.to(attn_bias.dtype)
    grads = [g if g is not None and grad_input_mask[i] else None for i, g in enumerate(grads)]
    return tuple(torch.empty(0, device=query.device) if g is None else g for g in grads)


def install() -> None:
    """Register the kernels for the PrivateUse1 key (idempotent)."""
    global _lib
    if _lib is not None:
        return
    _lib = torch.library.Library("aten", "IMPL")
    _lib.impl("_scaled_dot_product_fused_attention_overrideable", forward, "PrivateUse1")
    _lib.impl("_scaled_dot_product_fused_attention_overrideable_backward", backward, "PrivateUse1")
