"""Fused attention for trn (SDPBackend.OVERRIDEABLE): flash-style blocked kernels.

kernels/csrc/attention.cpp makes scaled_dot_product_attention choose OVERRIDEABLE on trn; these
are the kernels it then calls. Like a flash kernel they never hold the L x S attention matrix:
keys/values are visited in blocks of BLOCK with an online softmax (running max and sum, fp32
accumulation), the forward returns the log-sum-exp, and the backward recomputes each block's
probabilities from it. Registered for the PrivateUse1 key, they run below autograd; the ops they
call run on trn like any other (the CPU kernels through the fallback).

Their outputs have the strides torch's meta kernels promise (the output in the query's dimension
order, each gradient in its input's): torch.compile plans buffers from the meta kernels and checks
an extern kernel's strides against them (a transposed query from a GPT block's head split failed
"expected ... stride 64==8").
"""

from __future__ import annotations

import math

import torch

from . import _core

BLOCK = 128


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


def _like_layout(x, like):
    """``x`` copied into a tensor of its shape laid out in ``like``'s dimension order (by stride,
    like torch's ``alloc_with_matching_layout``); ``x`` itself when already so."""
    order = sorted(range(like.dim()), key=lambda i: like.stride(i), reverse=True)
    strides, step = [0] * like.dim(), 1
    for i in reversed(order):
        strides[i] = step
        step *= x.size(i)
    if list(x.stride()) == strides:
        return x
    return torch.empty_strided(x.shape, strides, dtype=x.dtype, device=x.device).copy_(x)


_FLASH_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _cpu_flash_mask(query, key, value, attn_bias):
    """``(True, mask)`` when CPU's flash kernel can run these inputs, else ``(False, None)``.

    ``_scaled_dot_product_flash_attention_for_cpu`` (the kernel CPU's own SDPA picks) is a C++
    flash kernel of this file's design: blocks of keys, online softmax, fp32 accumulation, the
    log-sum-exp saved for a backward that recomputes the probabilities. On trn it runs on zero-copy
    CPU aliases through the fallback and costs what it costs on CPU; the blocked loop below makes
    ~40 small ops per block (a tiny GPT-2 train step spent ~14 ms of ~70 in it). It needs one
    floating dtype, 4-D inputs, one head size, and a 2-D or 4-D mask that is float32 or the inputs'
    dtype; a bool mask becomes additive (0 / -inf), as upstream's SDPA converts it."""
    dt = query.dtype
    if dt not in _FLASH_DTYPES or key.dtype != dt or value.dtype != dt:
        return False, None
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        return False, None
    if not (query.size(-1) == key.size(-1) == value.size(-1)):
        return False, None
    if attn_bias is None or not attn_bias.numel():
        return True, None
    mask = _bias(attn_bias, dt if attn_bias.dtype == torch.bool else attn_bias.dtype)
    if mask.dtype not in (torch.float32, dt):
        mask = mask.float()
    while mask.dim() < 4 and mask.dim() != 2:
        mask = mask.unsqueeze(0)
    return mask.dim() in (2, 4), mask


def _in_layout_of(x, like):
    """``x`` (of ``like``'s shape) with ``like``'s strides, as the meta kernels promise."""
    return x if x.stride() == like.stride() else torch.empty_like(like).copy_(x)


def forward(query, key, value, attn_bias=None, dropout_p=0.0, is_causal=False,
            return_debug_mask=False, *, scale=None):  # fmt: skip
    if dropout_p != 0.0:
        raise RuntimeError("trn fused attention: dropout is not supported (use the math path)")
    ok, mask = _cpu_flash_mask(query, key, value, attn_bias)
    if ok:
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            query, key, value, 0.0, is_causal, attn_mask=mask, scale=scale
        )
        empty = torch.empty(0, dtype=torch.int64, device=query.device)
        seed = torch.empty((), dtype=torch.int64, device=query.device)  # 0-d, as the meta kernel's
        n_q, n_k = query.size(-2), key.size(-2)
        return (_in_layout_of(out, query), lse.contiguous(), empty, empty, n_q, n_k, seed, seed,
                torch.empty(0, device=query.device))  # fmt: skip
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
    out = _like_layout((acc / denom).to(query.dtype), query)
    lse = (m + torch.log(denom)).squeeze(-1)
    empty = torch.empty(0, dtype=torch.int64, device=query.device)
    seed = torch.empty((), dtype=torch.int64, device=query.device)  # 0-d, as the meta kernel's
    return out, lse, empty, empty, n_q, n_k, seed, seed, torch.empty(0, device=query.device)


def backward(grad_out, query, key, value, attn_bias, grad_input_mask, out, logsumexp,
             cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, philox_seed,
             philox_offset, *, scale=None):  # fmt: skip
    want_mask_grad = grad_input_mask[3] and attn_bias is not None and attn_bias.numel() > 0
    ok, mask = _cpu_flash_mask(query, key, value, attn_bias)
    if ok and not (want_mask_grad and attn_bias.dtype != torch.bool):
        # CPU's flash backward has no gradient for the mask; the blocked kernel below has
        grads = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
            grad_out, query, key, value, out, logsumexp, 0.0, is_causal, attn_mask=mask,
            scale=scale,
        )  # fmt: skip
        grads = [_in_layout_of(g, x) for g, x in zip(grads, (query, key, value))]
        return tuple(
            g if grad_input_mask[i] else torch.empty(0, device=query.device)
            for i, g in enumerate([*grads, torch.empty(0, device=query.device)])
        )
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
    grads = [
        _like_layout(dq.to(query.dtype), query),
        _like_layout(dk.to(key.dtype), key),
        _like_layout(dv.to(value.dtype), value),
        None,
    ]
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
    _core.python_kernels(
        __name__,
        {
            "_scaled_dot_product_fused_attention_overrideable": forward,
            "_scaled_dot_product_fused_attention_overrideable_backward": backward,
        },
    )
