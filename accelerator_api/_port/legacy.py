"""Two older CUDA spellings torch still runs: a storage's ``.cuda()`` (the old checkpoints'
``torch.load(..., map_location=lambda storage, loc: storage.cuda())``) and the deprecated
``torch.set_default_tensor_type("torch.cuda.FloatTensor")`` (SSD-era training scripts). On the
target: ``storage.to(device=<target device>)`` (a storage takes its device by keyword only), and
the two settings the deprecated call made, ``set_default_device`` and ``set_default_dtype``."""

from __future__ import annotations

import functools
import sys

import torch

from .dtypes import check_dtype, legacy_dtype
from .patcher import Patcher
from .sites import RECORDER, is_internal
from .target import Target, port_index, show


def install(p: Patcher) -> None:
    real_cuda = torch.UntypedStorage.cuda

    @functools.wraps(real_cuda)
    def storage_cuda(self, device=None, non_blocking=False):
        if is_internal(sys._getframe(1).f_code.co_filename):
            return real_cuda(self, device, non_blocking)
        dest = Target.device(port_index(device))
        RECORDER.hit(
            "UntypedStorage.cuda()" if device is None else f"UntypedStorage.cuda({show(device)})",
            f"UntypedStorage.to(device={show(dest)})",
        )
        return self.to(device=dest, non_blocking=non_blocking)

    p.set(torch.UntypedStorage, "cuda", storage_cuda)
    real_set = torch.set_default_tensor_type

    @functools.wraps(real_set)
    def set_default_tensor_type(t, /):
        dtype = legacy_dtype(t)
        if dtype is None:
            return real_set(t)
        name = t if isinstance(t, str) else t.__legacy_cuda_type__
        check_dtype(f"torch.set_default_tensor_type({name})", dtype)
        RECORDER.hit(
            f"torch.set_default_tensor_type({name})",
            f"torch.set_default_device({Target.type!r}), torch.set_default_dtype({dtype})",
        )
        # no index: each new tensor on the device current when it is made, as CUDA's type did
        torch.set_default_device(None if Target.is_cpu else Target.type)
        torch.set_default_dtype(dtype)
        return None

    p.set(torch, "set_default_tensor_type", set_default_tensor_type)
