"""Opt-in device kernels for the numerics that CPU kernels do not reproduce by themselves.

Installed only when NEURON_RT_STOCHASTIC_ROUNDING_EN=1 or HN_TRN_MATMUL_BF16=1, so the default
hot path is untouched. (Plain bf16/fp16 matmuls need nothing: the CPU kernels behind the
device already accumulate in fp32 and round once; tests/kernels/test_trainium_device.py checks.)

* matmul-class ops: computed by numerics.fp32_accumulate on host copies, result rounded once
  (stochastically for bf16 with SR) or fp32 computed through bf16 inputs.
* Tensor.to(bfloat16) and ``copy_`` of fp32 data into bf16 on trn: stochastic rounding with the
  seeded generator.
"""

from __future__ import annotations

import warnings

import torch
from torch.utils._pytree import tree_map

from .numerics import fp32_accumulate

_lib: torch.library.Library | None = None
MATMUL_KERNELS = ("mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "convolution")


def _name() -> str:
    return torch._C._get_privateuse1_backend_name()


def _is_dev(x) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == _name()


def _matmul_kernel(op, state):
    def run(*args, **kwargs):
        device = next(x.device for x in list(args) + list(kwargs.values()) if _is_dev(x))
        host = tree_map(lambda x: x.cpu() if _is_dev(x) else x, (args, kwargs))
        out = fp32_accumulate(
            op,
            host[0],
            host[1],
            rounding=state.rounding if state.rounding.enabled else None,
            fp32_via_bf16=state.matmul_bf16,
        )
        return out.to(device)

    return run


def _to_copy_kernel(state):
    def run(
        self,
        dtype=None,
        layout=None,
        device=None,
        pin_memory=None,
        non_blocking=False,
        memory_format=None,
    ):
        dtype = dtype or self.dtype
        device = torch.device(device) if device is not None else self.device
        if device.type == _name():
            dtype = state.dtypes.resolve(dtype, "aten::_to_copy (Tensor.to)")
        src = self
        if state.rounding.enabled and self.dtype == torch.float32 and dtype == torch.bfloat16:
            src = state.rounding.to_bf16(self.cpu()).view(self.shape)
        out = torch.empty_like(
            self,
            dtype=dtype,
            device=device,
            pin_memory=bool(pin_memory),
            memory_format=memory_format or torch.preserve_format,
        )
        return out.copy_(src, non_blocking)

    return run


def _copy_kernel(state):
    def run(self, src, non_blocking=False):
        if (
            self.dtype == torch.bfloat16
            and src.dtype == torch.float32
            and _is_dev(self)
            and self.numel()
        ):
            src = state.rounding.to_bf16(src.cpu().contiguous()).view(src.shape)
        # what at::native::copy_ does for a PrivateUse1 tensor: the backend's _copy_from
        torch.ops.aten._copy_from(src, self, non_blocking)
        return self

    return run


def install(state) -> None:
    """Register the kernels on PrivateUse1 (once)."""
    global _lib
    if _lib is not None:
        return
    _lib = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
        for name in MATMUL_KERNELS:
            _lib.impl(
                name, _matmul_kernel(getattr(torch.ops.aten, name).default, state), "PrivateUse1"
            )
        if state.rounding.enabled:
            _lib.impl("_to_copy", _to_copy_kernel(state), "PrivateUse1")
            _lib.impl("copy_", _copy_kernel(state), "PrivateUse1")
