"""Which c10d backend to use for the current device."""

from __future__ import annotations

import torch

from . import runtime as _dev
from .errors import Unsupported


def distributed_backend(dev=None) -> str:
    """The c10d backend for `dev` (default: current device): nccl, xccl, gloo, or a plugin's own.

    Delegates to `torch.distributed.get_default_backend_for_device`; gap filled on older torch
    from `Backend.default_device_backend_map`, where plugins register their backend.
    """
    if not torch.distributed.is_available():
        raise Unsupported(
            "distributed_backend", _dev.device_type(), "torch was built without torch.distributed"
        )
    target = torch.device(dev) if dev is not None else _dev.device()
    dist = torch.distributed
    fn = getattr(dist, "get_default_backend_for_device", None)
    if fn is not None:
        try:
            return fn(target)
        except (RuntimeError, ValueError) as err:
            raise Unsupported("distributed_backend", target.type, str(err)) from None
    table = getattr(dist.Backend, "default_device_backend_map", {"cpu": "gloo", "cuda": "nccl"})
    if target.type not in table:
        raise Unsupported(
            "distributed_backend", target.type, "no c10d backend is registered for it"
        )
    return table[target.type]
