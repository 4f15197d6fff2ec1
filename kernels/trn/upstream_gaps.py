"""Places in torch's Python that decide by device *name* and miss a renamed PrivateUse1 backend.

Each is a question upstream answers for "cuda"/"cpu" (or for the literal "privateuse1") where trn
has the same answer as the device it emulates; ``install`` gives trn that answer and leaves every
other device to upstream's code.

* ``Tensor.__dlpack_device__`` (torch/_tensor.py) tests ``self.device.type == "privateuse1"``,
  never true once the backend is renamed, so ``torch.from_dlpack(t)`` of a trn tensor raised
  ``ValueError: Unknown device type trn for Dlpack``. ATen's toDLPack/fromDLPack already map
  PrivateUse1 to ``kDLExtDev``: trn answers ``(kDLExtDev, index)``.
* ``LinearCrossEntropyOptions._resolve_auto_acc_dtype`` (torch/nn/modules/
  linear_cross_entropy_options.py) gives bf16/fp16 inputs a float32 accumulator only on CUDA
  (SM 8.0+) and CPU, "hardware with a working mixed-precision mm path"; any other device
  accumulates the chunked loss in bf16. trn's matmuls accumulate in float32 (Trainium's PSUM;
  the CPU kernels here), so it answers float32, like CPU: without it the chunked
  ``linear_cross_entropy`` on trn was computed in bf16 and missed CPU's result.
"""

from __future__ import annotations

import torch

_installed: str | None = None


def install(name: str) -> None:
    global _installed
    if _installed is not None:
        return
    _install_dlpack(name)
    _install_linear_cross_entropy_acc(name)
    _installed = name


def _install_dlpack(name: str) -> None:
    upstream = torch.Tensor.__dlpack_device__

    def __dlpack_device__(self):
        device = self.device
        if device.type == name and not torch.overrides.has_torch_function_unary(self):
            from torch.utils.dlpack import DLDeviceType

            return (DLDeviceType.kDLExtDev, device.index if device.index is not None else 0)
        return upstream(self)

    __dlpack_device__.__doc__ = upstream.__doc__
    torch.Tensor.__dlpack_device__ = __dlpack_device__


def _install_linear_cross_entropy_acc(name: str) -> None:
    try:
        from torch.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions
    except ImportError:  # a torch without the chunked loss: nothing to answer
        return
    upstream = LinearCrossEntropyOptions._resolve_auto_acc_dtype

    def _resolve_auto_acc_dtype(dtype, device):
        if device is not None and device.type == name:
            return torch.float32 if dtype in (torch.float16, torch.bfloat16) else None
        return upstream(dtype, device)

    LinearCrossEntropyOptions._resolve_auto_acc_dtype = staticmethod(_resolve_auto_acc_dtype)
