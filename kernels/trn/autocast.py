"""Autocast policy for trn: which ops run in the autocast dtype and which are kept in float32.

The native core registers a fallthrough for AutocastPrivateUse1 (ops not listed here are untouched);
this module adds Python kernels on that key for the listed ops. The lists mirror CUDA's policy and
are data, so a stricter device can change them before `install()`.
"""

from __future__ import annotations

import torch

# Matmul-class ops: run in the autocast dtype (bf16/fp16), as tensor engines do.
LOWER_PRECISION = [
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "addbmm",
    "matmul",
    "linear",
    "mv",
    "dot",
    "addmv",
    "addr",
    "conv1d",
    "conv2d",
    "conv3d",
    "convolution",
    "_convolution",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "prelu",
    "scaled_dot_product_attention",
    "chain_matmul",
    "linalg_vecdot",
]
# Ops that lose accuracy in half precision: run in float32.
FLOAT32 = [
    "softmax.int",
    "log_softmax.int",
    "cross_entropy_loss",
    "nll_loss",
    "nll_loss2d",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "layer_norm",
    "group_norm",
    "norm.Scalar",
    "frobenius_norm.dim",
    "nuclear_norm",
    "cosine_similarity",
    "poisson_nll_loss",
    "cosine_embedding_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "exp",
    "log",
    "pow.Tensor_Scalar",
    "pow.Tensor_Tensor",
    "sum",
    "prod",
    "cumsum",
    "cumprod",
    "rsqrt",
    "reciprocal",
    "acos",
    "asin",
    "cosh",
    "erfinv",
    "expm1",
    "log10",
    "log2",
    "log1p",
    "sinh",
    "tan",
    "softplus",
    "dist",
    "pdist",
    "cdist",
    "renorm",
    "logsumexp",
]

_lib: torch.library.Library | None = None
_KEY = "AutocastPrivateUse1"


def _eligible(x, device_type: str) -> bool:
    return (
        isinstance(x, torch.Tensor)
        and x.device.type == device_type
        and x.is_floating_point()
        and x.dtype != torch.float64
    )


def _cast(obj, dtype, device_type):
    if _eligible(obj, device_type):
        return obj.to(dtype)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cast(o, dtype, device_type) for o in obj)
    return obj


def _kernel(op, to_dtype):
    def run(*args, **kwargs):
        device_type = torch._C._get_privateuse1_backend_name()
        dtype = to_dtype or torch.get_autocast_dtype(device_type)
        ks = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)
        with torch._C._ExcludeDispatchKeyGuard(ks):
            return op(
                *_cast(args, dtype, device_type),
                **{k: _cast(v, dtype, device_type) for k, v in kwargs.items()},
            )

    return run


def _overloads(name: str):
    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return []
    names = [overload] if overload else packet.overloads()
    return [(f"{base}.{o}" if o != "default" else base, getattr(packet, o)) for o in names]


def install() -> None:
    """Register the policy kernels (once)."""
    global _lib
    if _lib is not None:
        return
    _lib = torch.library.Library("aten", "IMPL")
    for names, dtype in ((LOWER_PRECISION, None), (FLOAT32, torch.float32)):
        for name in names:
            for qualified, op in _overloads(name):
                if "out" in qualified.split(".")[-1]:
                    continue  # autocast never touches out= variants
                _lib.impl(qualified, _kernel(op, dtype), _KEY)
